/**
 * How much one set of resolutions (a step's whole config, a rule tree) may produce, in characters (of JSON
 * for a whole-value tag). A config can name one large value many times, and each tag hands out its own
 * copy or text: the budget bounds the sum, where maxLength bounds one string.
 */
export interface TemplateBudget {
  readonly limit: number
  /** What is still free. */
  readonly left: number
  /** True once a resolution was refused for want of budget. */
  readonly exceeded: boolean
  /** Takes `size` from the budget; false (and nothing taken) when it does not fit. */
  spend(size: number): boolean
}

/** A fresh budget of `limit` characters. */
export function createTemplateBudget(limit: number): TemplateBudget {
  let left = limit
  let exceeded = false
  return {
    limit,
    get left() {
      return left
    },
    get exceeded() {
      return exceeded
    },
    spend(size) {
      if (size > left) {
        exceeded = true
        return false
      }
      left -= size
      return true
    },
  }
}
