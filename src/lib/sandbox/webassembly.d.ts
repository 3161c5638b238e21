// The WebAssembly globals Node provides, as far as lib/sandbox uses them: their types come with lib "dom",
// which this project does not load.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: ArrayBufferView | ArrayBuffer)
  }
  interface MemoryDescriptor {
    initial: number
    maximum?: number
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor)
    readonly buffer: ArrayBuffer
    grow(delta: number): number
  }
  function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>
}
