#!/usr/bin/env node
// The image's HEALTHCHECK (docs/running.md#docker). Slim images have no curl, so this asks the instance in
// the same container for GET /health, as Plinth's settings place it (HOST, PORT): exit 0 when it answers 200
// with status "ok" within 4 s, 1 otherwise, with one line saying why (Docker keeps it in `docker inspect`).
import { get } from 'node:http'

const setting = (name, fallback) => process.env[name]?.trim() || fallback
const listen = setting('HOST', '127.0.0.1')
// A server listening on every interface is reached on loopback.
const host = listen === '0.0.0.0' || listen === '::' ? '127.0.0.1' : listen
const port = Number(setting('PORT', '8090'))

function fail(reason) {
  process.stderr.write(`unhealthy: ${reason}\n`)
  process.exit(1)
}

const request = get({ host, port, path: '/health', timeout: 4000 }, (response) => {
  let body = ''
  response.setEncoding('utf8')
  response.on('data', (chunk) => (body += chunk))
  response.on('end', () => {
    if (response.statusCode !== 200) fail(`GET /health answered ${response.statusCode}`)
    let status
    try {
      status = JSON.parse(body).status
    } catch {
      fail('GET /health did not answer JSON')
    }
    if (status !== 'ok') fail(`GET /health says status ${JSON.stringify(status)}`)
    process.exit(0)
  })
})
request.on('timeout', () => request.destroy(new Error('no answer within 4 s')))
request.on('error', (err) => fail(`GET http://${host}:${port}/health: ${err.message}`))
