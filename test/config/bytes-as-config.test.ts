/**
 * A config file read without an encoding (a Buffer, a Uint8Array) is refused as bytes, saying to decode it or to
 * use loadServiceConfig, by parseServiceConfig and by everything that parses a config through it: as an object its
 * bytes read as fields "0", "1", ... and the config configured nothing.
 */
import { describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { oneEntryConfig, RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const TEXT = JSON.stringify(oneEntryConfig('pkg.Service', RETRY_UNAVAILABLE_POLICY));
const advice =
  "(bytes), not a service config: decode it first (buffer.toString('utf8')) and pass the text, or read the file with loadServiceConfig(file)";

function errorOf(call: () => unknown): ServiceConfigError {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceConfigError);
    return error as ServiceConfigError;
  }
  throw new Error('accepted');
}

describe('bytes where a service config goes', () => {
  it.each([
    ['a Buffer', Buffer.from(TEXT)],
    ['a Uint8Array', new TextEncoder().encode(TEXT)],
    ['an ArrayBuffer', new TextEncoder().encode(TEXT).buffer],
  ])('parseServiceConfig refuses %s', (kind, bytes) => {
    const error = errorOf(() => parseServiceConfig(bytes as never));
    expect(error.message).toBe(`is ${kind} ${advice}`);
    expect(error.path).toBe('');
    // Decoded, the same bytes parse.
    expect(parseServiceConfig(Buffer.from(bytes as ArrayBuffer).toString('utf8')).methodConfig).toHaveLength(
      1,
    );
  });

  it('createRetryInterceptor, createChannelOptions and validateServiceConfig say the same', () => {
    const bytes = Buffer.from(TEXT);
    const message = `is a Buffer ${advice}`;
    expect(errorOf(() => createRetryInterceptor(bytes as never)).message).toBe(message);
    expect(errorOf(() => createChannelOptions(bytes as never)).message).toBe(message);
    expect(validateServiceConfig(bytes as never).errors.map((e) => e.message)).toEqual([message]);
  });
});
