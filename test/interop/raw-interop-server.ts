/**
 * A `grpc.testing.TestService` server written on node:http2 directly, for the compression interop cases: a grpc-js
 * server decompresses messages before its handlers see them, so it cannot tell whether a request came with the
 * compressed flag, nor set the flag per response. This one records, for each attempt, the compressed flag of every
 * request message it received and of every response message it sent.
 *
 * It implements what the compression cases need (grpc/grpc doc/interop-test-descriptions.md): UnaryCall,
 * StreamingInputCall and StreamingOutputCall, with the CompressedRequest feature (`expect_compressed`: a request
 * compressed otherwise than it says ends the call with INVALID_ARGUMENT) and the CompressedResponse feature
 * (`response_compressed`, `ResponseParameters.compressed`: gzip, when the client accepts it). Any other method is
 * UNIMPLEMENTED. Like the grpc-js interop server, it applies the `x-interop-first-attempt` rule and tags its
 * headers and trailers with the attempt (interop-service.ts). Listens on 127.0.0.1, port 0.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import type { ServerAttempt } from './interop-cases.js';
import {
  ATTEMPT_TAG_KEY,
  attemptOf,
  CALL_TAG_KEY,
  type EchoStatus,
  FIRST_ATTEMPT_FAILURE,
  firstAttemptRule,
  type ResponseParameters,
  type SimpleRequest,
  SLOW_FIRST_ATTEMPT_MS,
  type StreamingInputCallRequest,
  type StreamingOutputCallRequest,
  testServiceDefinition,
  zeros,
} from './interop-service.js';

/** What the raw server recorded of one attempt. */
export interface RawAttempt extends ServerAttempt {
  /** The compressed flag of each request message received, in order. */
  readonly requestFlags: boolean[];
  /** The compressed flag of each response message sent, in order. */
  readonly responseFlags: boolean[];
}

export interface RawInteropServer {
  readonly address: string;
  /** Every attempt it saw, oldest first. */
  readonly attempts: RawAttempt[];
  stop(): Promise<void>;
}

const SERVICE = '/grpc.testing.TestService/';
type Method = 'UnaryCall' | 'StreamingInputCall' | 'StreamingOutputCall';
const METHODS: readonly string[] = ['UnaryCall', 'StreamingInputCall', 'StreamingOutputCall'];
/** The methods whose client sends one request and then half-closes. */
const SINGLE_REQUEST_METHODS: readonly string[] = ['UnaryCall', 'StreamingOutputCall'];
/** How long an ended request stream waits for a reset that says the client cancelled it (ms). */
const END_TO_RESET_WAIT_MS = 5;

/** The message (de)serializers of a method, from the loaded service definition. */
function codec(method: Method): grpc.MethodDefinition<unknown, unknown> {
  const definition = testServiceDefinition[method];
  if (!definition) {
    throw new Error(`no ${method} in the service definition`);
  }
  return definition;
}

/** grpc-message: percent-encoded UTF-8, printable ASCII but '%' as is. */
function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function frame(message: Buffer, compress: boolean): Buffer {
  const body = compress ? zlib.gzipSync(message) : message;
  const header = Buffer.alloc(5);
  header[0] = compress ? 1 : 0;
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Whether a request was compressed as its `expect_compressed` says (when it says anything). */
function compressedAsExpected(expected: { value: boolean } | null | undefined, compressed: boolean): boolean {
  return expected === null || expected === undefined || expected.value === compressed;
}

/** Serves one HTTP/2 stream: one attempt. */
function serveStream(
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  attempts: RawAttempt[],
): void {
  const get = (key: string): readonly unknown[] => {
    const value = headers[key];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  };
  const path = String(headers[':path'] ?? '');
  const method = path.startsWith(SERVICE) ? path.slice(SERVICE.length) : path;
  const record: RawAttempt = {
    method,
    attempt: attemptOf(get),
    callTag: String(get(CALL_TAG_KEY)[0] ?? ''),
    rule: firstAttemptRule(get),
    end: undefined,
    requestFlags: [],
    responseFlags: [],
  };
  attempts.push(record);
  const encoding = String(headers['grpc-encoding'] ?? 'identity');
  const acceptsGzip = String(headers['grpc-accept-encoding'] ?? '')
    .split(',')
    .map((e) => e.trim())
    .includes('gzip');
  let headersSent = false;
  let finished = false;
  stream.on('error', () => {});
  stream.on('close', () => {
    record.end ??= { kind: 'cancelled', at: performance.now() };
  });

  const open = () => !finished && !stream.closed && !stream.destroyed;
  const sendHeaders = () => {
    if (headersSent || !open()) {
      return;
    }
    headersSent = true;
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        'grpc-accept-encoding': 'identity,deflate,gzip',
        ...(acceptsGzip ? { 'grpc-encoding': 'gzip' } : {}),
        [ATTEMPT_TAG_KEY]: String(record.attempt),
      },
      { waitForTrailers: true },
    );
  };
  const send = (message: Buffer, compress: boolean) => {
    if (!open()) {
      return false;
    }
    sendHeaders();
    const compressed = compress && acceptsGzip;
    record.responseFlags.push(compressed);
    stream.write(frame(message, compressed));
    return true;
  };
  const finish = (status: EchoStatus) => {
    if (!open()) {
      return;
    }
    finished = true;
    record.end = { kind: 'status', code: status.code, at: performance.now() };
    const trailers = {
      'grpc-status': String(status.code),
      ...(status.message ? { 'grpc-message': percentEncode(status.message) } : {}),
      [ATTEMPT_TAG_KEY]: String(record.attempt),
    };
    if (headersSent) {
      stream.once('wantTrailers', () => stream.sendTrailers(trailers));
      stream.end();
    } else {
      // Trailers-Only.
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', ...trailers },
        { endStream: true },
      );
    }
  };

  if (!METHODS.includes(method)) {
    finish({ code: grpc.status.UNIMPLEMENTED, message: `unknown method ${path}` });
    return;
  }
  const definition = codec(method as Method);
  // A `slow` first attempt answers nothing before this; requests are read and recorded meanwhile.
  const gate = record.rule === 'slow' ? sleep(SLOW_FIRST_ATTEMPT_MS) : Promise.resolve();
  const later = (then: () => void | Promise<void>) => {
    void gate.then(() => (open() ? then() : undefined));
  };

  const requests: unknown[] = [];
  let failure: EchoStatus | undefined;
  const onRequest = (compressed: boolean, body: Buffer) => {
    record.requestFlags.push(compressed);
    let message: Buffer = body;
    if (compressed) {
      try {
        message =
          encoding === 'gzip'
            ? zlib.gunzipSync(body)
            : encoding === 'deflate'
              ? zlib.inflateSync(body)
              : (() => {
                  throw new Error(`compressed message with grpc-encoding ${encoding}`);
                })();
      } catch (error) {
        failure ??= { code: grpc.status.INTERNAL, message: String(error) };
        return;
      }
    }
    const request = definition.requestDeserialize(message) as SimpleRequest | StreamingInputCallRequest;
    if (!compressedAsExpected(request.expectCompressed, compressed)) {
      failure ??= {
        code: grpc.status.INVALID_ARGUMENT,
        message: `expected ${request.expectCompressed?.value ? 'a compressed' : 'an uncompressed'} request`,
      };
    }
    requests.push(request);
  };

  const respond = async () => {
    if (failure) {
      finish(failure);
      return;
    }
    if (method === 'UnaryCall') {
      const request = (requests[0] ?? {}) as SimpleRequest;
      const status = request.responseStatus;
      if (status && status.code !== 0) {
        finish(status);
        return;
      }
      const response = { payload: { type: 'COMPRESSABLE', body: zeros(request.responseSize ?? 0) } };
      send(definition.responseSerialize(response), request.responseCompressed?.value === true);
    } else if (method === 'StreamingInputCall') {
      const aggregated = (requests as StreamingInputCallRequest[]).reduce(
        (sum, r) => sum + (r.payload?.body.length ?? 0),
        0,
      );
      send(definition.responseSerialize({ aggregatedPayloadSize: aggregated }), false);
    } else {
      const request = (requests[0] ?? {}) as StreamingOutputCallRequest;
      for (const p of (request.responseParameters ?? []) as ResponseParameters[]) {
        if ((p.intervalUs ?? 0) > 0) {
          await sleep((p.intervalUs ?? 0) / 1000);
        }
        const response = { payload: { type: 'COMPRESSABLE', body: zeros(p.size) } };
        if (!send(definition.responseSerialize(response), p.compressed?.value === true)) {
          return;
        }
      }
    }
    finish({ code: grpc.status.OK, message: '' });
  };

  const unavailable = () => finish({ code: grpc.status.UNAVAILABLE, message: FIRST_ATTEMPT_FAILURE });

  // Deframing.
  let buffered = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 5) {
      const length = buffered.readUInt32BE(1);
      if (buffered.length < 5 + length) {
        break;
      }
      const compressed = buffered[0] === 1;
      const body = Buffer.from(buffered.subarray(5, 5 + length));
      buffered = buffered.subarray(5 + length);
      onRequest(compressed, body);
      if (record.rule === 'unavailable') {
        unavailable();
      }
    }
  });
  stream.on('end', () => {
    // Node also ends the readable side when the client resets the stream: that is no half-close. A client's cancel
    // is an END_STREAM and then an RST_STREAM (Node's `close()` ends the writable side first), which a loaded
    // server may read apart: a call with a single request that ends before its request came was cancelled (no
    // client half-closes it without the request), and the others wait a moment for the reset.
    if (SINGLE_REQUEST_METHODS.includes(method) && requests.length === 0 && failure === undefined) {
      return;
    }
    setTimeout(() => {
      if (stream.rstCode !== undefined && stream.rstCode !== 0) {
        return;
      }
      if (record.rule === 'unavailable') {
        unavailable();
      } else {
        later(respond);
      }
    }, END_TO_RESET_WAIT_MS);
  });
}

/** Starts the raw interop server on 127.0.0.1 (port 0). */
export async function startRawInteropServer(): Promise<RawInteropServer> {
  const attempts: RawAttempt[] = [];
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createServer({ maxSessionMemory: 100 });
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => serveStream(stream, headers, attempts));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    attempts,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) {
          session.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
