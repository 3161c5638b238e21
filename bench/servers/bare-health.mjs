// Baseline for bench/health.ts: node:http answering the same JSON body, nothing else.
import { createServer } from 'node:http'

const body = process.env.BODY ?? '{}'
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
