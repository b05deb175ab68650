/**
 * The request-id interceptor without a network: each call driven through a fake next call, so that what it hands
 * on (metadata, message), what it warns and what it throws can be read exactly. The end-to-end behaviour, with the
 * retry interceptor and the flaky server, is in request-id.test.ts.
 */
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRequestIdInterceptor } from '../../src/request-id/request-id-interceptor.js';
import { markChannelLevel } from '../../src/shared/channel-level.js';
import { definitionOf, json, run, type Serializer } from '../helpers/request-id-call.js';
import { captureWarnings } from '../helpers/warnings.js';

function retriedMetadata(): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('grpc-previous-rpc-attempts', '1');
  return metadata;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('header mode', () => {
  it('fills a header that is absent or empty, and keeps one that has a value', () => {
    const interceptor = createRequestIdInterceptor({ generate: () => 'new-id' });
    expect(run(interceptor, {}).metadata[0]?.get('x-request-id')).toEqual(['new-id']);
    const empty = new grpc.Metadata();
    empty.set('x-request-id', '');
    expect(run(interceptor, {}, { metadata: empty }).metadata[0]?.get('x-request-id')).toEqual(['new-id']);
    const given = new grpc.Metadata();
    given.set('x-request-id', 'callers-id');
    const sent = run(interceptor, {}, { metadata: given }).metadata[0];
    expect(sent).toBe(given);
    expect(sent?.get('x-request-id')).toEqual(['callers-id']);
  });

  it('inside a retry layer (a later attempt), it warns once with its code', () => {
    const warnings = captureWarnings();
    const interceptor = createRequestIdInterceptor({ generate: () => 'id' });
    run(interceptor, {});
    expect(warnings).toEqual([]);
    run(interceptor, {}, { metadata: retriedMetadata() });
    run(interceptor, {}, { metadata: retriedMetadata() });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REQUEST_ID_ORDER']);
    expect(warnings[0]?.message).toContain('put createRequestIdInterceptor before createRetryInterceptor');
  });
});

describe('field mode', () => {
  it('fills a field that is absent, null or empty, on a copy; keeps a non-empty string', () => {
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'new-id' });
    for (const value of [undefined, null, '']) {
      const message = { requestId: value, name: 'n' };
      const sent = run(interceptor, message).messages[0];
      expect(sent).toEqual({ requestId: 'new-id', name: 'n' });
      expect(message.requestId).toBe(value);
    }
    const kept = { requestId: 'callers-id' };
    expect(run(interceptor, kept).messages[0]).toBe(kept);
  });

  it('hands on a message that is not an object as it is', () => {
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'id' });
    for (const message of [null, 'text', 7]) {
      const sent = run(interceptor, message);
      expect(sent.messages).toEqual([message]);
      expect(sent.cancelled).toEqual([]);
    }
  });

  it('inside a retry layer (a later attempt), it warns once with its code', () => {
    const warnings = captureWarnings();
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'id' });
    run(interceptor, {}, { metadata: retriedMetadata() });
    run(interceptor, {}, { metadata: retriedMetadata() });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REQUEST_ID_ORDER']);
  });

  it('warns of a request stream only where interceptChannel made it, and leaves the messages alone', () => {
    const warnings = captureWarnings();
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'id' });
    const plain = run(interceptor, { a: 1 }, { definition: definitionOf('/pkg.S/Upload', json, true) });
    expect(plain.messages).toEqual([{ a: 1 }]);
    expect(warnings).toEqual([]);
    const atChannel = markChannelLevel(definitionOf('/pkg.S/Upload', json, true));
    run(interceptor, Buffer.from('x'), { definition: atChannel });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REQUEST_ID_FIELD']);
    expect(warnings[0]?.message).toContain('cannot fill requestId at a channel (interceptChannel)');
  });
});

describe('what generate returns', () => {
  it.each([
    ['an empty string', '', '""'],
    ['a number', 42, '42'],
    ['undefined', undefined, 'undefined'],
  ])('%s is an error naming the option, in both modes', (_name, id, shown) => {
    for (const mode of [{}, { field: 'requestId' }]) {
      const interceptor = createRequestIdInterceptor({ ...mode, generate: () => id as string });
      expect(() => run(interceptor, {})).toThrow(
        new TypeError(
          `createRequestIdInterceptor: options.generate must return a non-empty string, got ${shown}`,
        ),
      );
    }
  });
});

describe('the options', () => {
  it.each([
    ['with an upper-case letter after the first', 'x-Request-Id'],
    ['with a space at the end', 'x-request-id '],
    ['a number', 5],
    ['empty', ''],
  ])('a header %s is refused, naming it', (_name, header) => {
    expect(() => createRequestIdInterceptor({ header: header as string })).toThrow(
      new TypeError(
        `createRequestIdInterceptor: options.header must be a lowercase text metadata key (not -bin, not grpc-), got ${JSON.stringify(header)}`,
      ),
    );
  });

  it('a field that is not a string is refused, even one that reads as a name', () => {
    expect(() => createRequestIdInterceptor({ field: ['requestId'] as never })).toThrow(
      new TypeError('createRequestIdInterceptor: options.field must be a field name, got ["requestId"]'),
    );
  });

  it('the factory put in interceptors itself: the error says to call it', () => {
    const asInterceptor = createRequestIdInterceptor as unknown as grpc.Interceptor;
    expect(() =>
      asInterceptor({ method_definition: definitionOf('/pkg.S/M') } as grpc.InterceptorOptions, () => {
        throw new Error('not reached');
      }),
    ).toThrow(
      new TypeError(
        "createRequestIdInterceptor was put in a client's interceptors itself, so grpc-js called it for the call /pkg.S/M: it makes the interceptor. Call it once, and put what it returns there: interceptors: [createRequestIdInterceptor()]",
      ),
    );
  });
});

describe('the check that the serializer keeps the field', () => {
  /**
   * A proto3 request `{ string request_id = 1; string name = 2; }` encoded as ts-proto's generated code does: by
   * the camelCase names, an implicit-presence string left out when empty (protobufjs writes it if it is set).
   */
  const proto: Serializer = (value) => {
    const writer = protobuf.Writer.create();
    const { requestId, name } = value as { requestId?: unknown; name?: unknown };
    if (typeof requestId === 'string' && requestId !== '') {
      writer.uint32(10).string(requestId);
    }
    if (typeof name === 'string' && name !== '') {
      writer.uint32(18).string(name);
    }
    return Buffer.from(writer.finish());
  };

  it("a snake_case field under the loader's camelCase: the hint names the other spelling", () => {
    const warnings = captureWarnings();
    const interceptor = createRequestIdInterceptor({ field: 'request_id', generate: () => 'id' });
    run(interceptor, { name: 'n' }, { definition: definitionOf('/t.S/M', proto) });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REQUEST_ID_FIELD']);
    expect(warnings[0]?.message).toContain('did you mean requestId?');
  });

  it('a name with an underscore but no other spelling: the hint names the two conventions', () => {
    const warnings = captureWarnings();
    const interceptor = createRequestIdInterceptor({ field: 'request_', generate: () => 'id' });
    run(interceptor, { name: 'n' }, { definition: definitionOf('/t.S/M', proto) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain(
      ": spell it as your loader gives it to JavaScript (requestId with @grpc/proto-loader's defaults, request_id with keepCase: true)",
    );
  });

  it('a serializer that throws is given the benefit of the doubt: the request goes, nothing is said', () => {
    const warnings = captureWarnings();
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'id' });
    const throwing: Serializer = () => {
      throw new Error('cannot serialize');
    };
    const sent = run(interceptor, {}, { definition: definitionOf('/t.S/Throwing', throwing) });
    expect(sent.messages).toEqual([{ requestId: 'id' }]);
    expect(warnings).toEqual([]);
  });
});
