/**
 * What `generate` returns is checked before it reaches grpc-js: an id that cannot be a metadata text value is an
 * error naming the option, not grpc-js's "Metadata string value ... contains illegal characters".
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createRequestIdInterceptor } from '../../src/request-id/request-id-interceptor.js';

/** Runs one unary call through the interceptor against a fake next call; returns what it sent. */
function runCall(interceptor: grpc.Interceptor): { metadata: grpc.Metadata[]; messages: unknown[] } {
  const sent = { metadata: [] as grpc.Metadata[], messages: [] as unknown[] };
  const definition = {
    path: '/pkg.S/M',
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: object) => Buffer.from(JSON.stringify(value)),
    responseDeserialize: (bytes: Buffer) => bytes,
  };
  const next = {
    start: (metadata: grpc.Metadata) => sent.metadata.push(metadata),
    sendMessageWithContext: (_context: object, message: unknown) => sent.messages.push(message),
    sendMessage: (message: unknown) => sent.messages.push(message),
    halfClose: () => {},
    cancelWithStatus: () => {},
    startRead: () => {},
    getPeer: () => '',
  };
  const call = interceptor(
    { method_definition: definition } as unknown as grpc.InterceptorOptions,
    () => next as unknown as grpc.InterceptingCall,
  );
  call.start(new grpc.Metadata(), {});
  call.sendMessage({});
  return sent;
}

const WHERE = 'createRequestIdInterceptor: options.generate';

describe('a generated id that cannot go in a header', () => {
  it.each([
    ['bad\nid', '"bad\\nid"'],
    ['tab\there', '"tab\\there"'],
    ['café', '"café"'],
  ])('%j is an error naming generate and the header', (id, described) => {
    const interceptor = createRequestIdInterceptor({ generate: () => id });
    expect(() => runCall(interceptor)).toThrow(
      new TypeError(
        `${WHERE} must return printable ASCII for the x-request-id header (a metadata text value has no control or non-ASCII characters), got ${described}`,
      ),
    );
  });

  it('names the header the id was for', () => {
    const interceptor = createRequestIdInterceptor({ header: 'x-idem', generate: () => 'a\r\nb' });
    expect(() => runCall(interceptor)).toThrow(/for the x-idem header/);
  });

  it('printable ASCII, spaces included, still goes', () => {
    const interceptor = createRequestIdInterceptor({ generate: () => 'id 1 ~!' });
    expect(runCall(interceptor).metadata[0]!.get('x-request-id')).toEqual(['id 1 ~!']);
  });

  it('in field mode any non-empty string goes: it is a message field, not a header', () => {
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'café\nid' });
    expect(runCall(interceptor).messages).toEqual([{ requestId: 'café\nid' }]);
  });
});
