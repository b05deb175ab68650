/**
 * OpenTelemetry text-map carrier accessors for grpc-js `Metadata`, so that any registered propagator (W3C
 * `traceparent`, B3, gRPC's `grpc-trace-bin`, ...) can write a span context into request metadata and read it back.
 */

import type { Metadata } from '@grpc/grpc-js';
import type { TextMapGetter, TextMapSetter } from '@opentelemetry/api';

/** Binary metadata keys end in `-bin` and carry a Buffer; text-map propagators hand them over in base64. */
function isBinaryKey(key: string): boolean {
  return key.endsWith('-bin');
}

/**
 * Writes propagation fields into grpc-js `Metadata`, replacing any value already there (an outer
 * instrumentation's `traceparent` is overwritten by the attempt's own). A `-bin` key's value is decoded from
 * base64 into the Buffer grpc-js requires for binary keys.
 */
export const metadataSetter: TextMapSetter<Metadata> = {
  set(carrier, key, value) {
    if (isBinaryKey(key)) {
      carrier.set(key, Buffer.from(value, 'base64'));
    } else {
      carrier.set(key, value);
    }
  },
};

/**
 * Reads propagation fields from grpc-js `Metadata` (on a server: `call.metadata`), e.g.
 * `propagation.extract(ROOT_CONTEXT, call.metadata, metadataGetter)`. A `-bin` key's Buffer is returned in base64.
 */
export const metadataGetter: TextMapGetter<Metadata> = {
  get(carrier, key) {
    const values = carrier.get(key);
    if (values.length === 0) {
      return undefined;
    }
    const strings = values.map((value) =>
      typeof value === 'string' ? value : Buffer.from(value).toString('base64'),
    );
    return strings.length === 1 ? strings[0] : strings;
  },
  keys(carrier) {
    return Object.keys(carrier.getMap());
  },
};
