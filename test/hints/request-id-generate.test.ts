/**
 * What `generate` returns is checked before it reaches grpc-js: an id that cannot be a metadata text value is an
 * error naming the option, not grpc-js's "Metadata string value ... contains illegal characters".
 */
import { describe, expect, it } from 'vitest';
import { createRequestIdInterceptor } from '../../src/request-id/request-id-interceptor.js';
import { run } from '../helpers/request-id-call.js';

const WHERE = 'createRequestIdInterceptor: options.generate';

describe('a generated id that cannot go in a header', () => {
  it.each([
    ['bad\nid', '"bad\\nid"'],
    ['tab\there', '"tab\\there"'],
    ['café', '"café"'],
  ])('%j is an error naming generate and the header', (id, described) => {
    const interceptor = createRequestIdInterceptor({ generate: () => id });
    expect(() => run(interceptor, {})).toThrow(
      new TypeError(
        `${WHERE} must return printable ASCII for the x-request-id header (a metadata text value has no control or non-ASCII characters), got ${described}`,
      ),
    );
  });

  it('names the header the id was for', () => {
    const interceptor = createRequestIdInterceptor({ header: 'x-idem', generate: () => 'a\r\nb' });
    expect(() => run(interceptor, {})).toThrow(/for the x-idem header/);
  });

  it('printable ASCII, spaces included, still goes', () => {
    const interceptor = createRequestIdInterceptor({ generate: () => 'id 1 ~!' });
    expect(run(interceptor, {}).metadata[0]!.get('x-request-id')).toEqual(['id 1 ~!']);
  });

  it('in field mode any non-empty string goes: it is a message field, not a header', () => {
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'café\nid' });
    expect(run(interceptor, {}).messages).toEqual([{ requestId: 'café\nid' }]);
  });
});
