/**
 * The response fields of one method of a proto, as the flaky server reads them from proto-loader's definition, and
 * the problems its check finds in a scripted response: for tests of the response checks without a server.
 */
import { loadSync } from '@grpc/proto-loader';
import { expect } from 'vitest';
import {
  formatResponseProblem,
  type MessageFields,
  responseFieldsOf,
  responseKeyProblems,
} from '../../src/testing/response-fields.js';

export interface ResponseFieldsLoad {
  /** proto-loader's `keepCase` (default false). */
  keepCase?: boolean;
  /** Drop the file descriptors from the method's response type (as some generated definitions come). */
  noFiles?: boolean;
  /** proto-loader's `oneofs`. */
  oneofs?: boolean;
}

/** The fields of `service`'s `method`'s response, from `proto` loaded as `options` say. */
export function responseFieldsFrom(
  proto: string,
  service: string,
  method: string,
  options: ResponseFieldsLoad = {},
): MessageFields {
  const definition = loadSync(proto, {
    keepCase: options.keepCase ?? false,
    ...(options.oneofs === undefined ? {} : { oneofs: options.oneofs }),
  });
  const methods = definition[service] as unknown as Record<string, Record<string, unknown>>;
  const definitionOf = { ...methods[method] } as Record<string, unknown>;
  if (options.noFiles) {
    const { fileDescriptorProtos: _dropped, ...rest } = definitionOf.responseType as Record<string, unknown>;
    definitionOf.responseType = rest;
  }
  const fields = responseFieldsOf(definitionOf);
  expect(fields).toBeDefined();
  return fields!;
}

/** What the response check says of `response` for `methodPath` (`/pkg.Service/Method`), one line each. */
export function responseProblems(
  response: Record<string, unknown>,
  fields: MessageFields,
  methodPath: string,
): string[] {
  return responseKeyProblems(response, fields, methodPath).map(formatResponseProblem);
}
