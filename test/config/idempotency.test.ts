import { describe, expect, it } from 'vitest';
import {
  findUnsafeRetriedMethods,
  isSafeToRepeat,
  methodIdempotency,
  type ProtoMethod,
} from '../../src/config/idempotency.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';

describe('methodIdempotency', () => {
  it.each<[Record<string, unknown> | undefined, string]>([
    [{ idempotency_level: 'IDEMPOTENT' }, 'IDEMPOTENT'],
    [{ idempotency_level: 'NO_SIDE_EFFECTS' }, 'NO_SIDE_EFFECTS'],
    [{ idempotency_level: 'IDEMPOTENCY_UNKNOWN' }, 'IDEMPOTENCY_UNKNOWN'],
    [{ idempotency_level: 2 }, 'IDEMPOTENT'],
    [{ idempotency_level: 1 }, 'NO_SIDE_EFFECTS'],
    [{ idempotency_level: 7 }, 'IDEMPOTENCY_UNKNOWN'],
    [{ idempotency_level: 'idempotent' }, 'IDEMPOTENCY_UNKNOWN'],
    [{ deprecated: false }, 'IDEMPOTENCY_UNKNOWN'],
    [undefined, 'IDEMPOTENCY_UNKNOWN'],
  ])('%j → %s', (options, level) => {
    expect(methodIdempotency(options)).toBe(level);
  });

  it('treats IDEMPOTENT and NO_SIDE_EFFECTS as safe to repeat', () => {
    expect(isSafeToRepeat('IDEMPOTENT')).toBe(true);
    expect(isSafeToRepeat('NO_SIDE_EFFECTS')).toBe(true);
    expect(isSafeToRepeat('IDEMPOTENCY_UNKNOWN')).toBe(false);
  });
});

describe('findUnsafeRetriedMethods', () => {
  const retryPolicy = {
    maxAttempts: 3,
    initialBackoff: '0.1s',
    maxBackoff: '1s',
    backoffMultiplier: 2,
    retryableStatusCodes: ['UNAVAILABLE'],
  };
  const config = parseServiceConfig({
    methodConfig: [
      { name: [{ service: 'a.Other' }, { service: 'a.S' }], retryPolicy },
      { name: [{ service: 'a.S', method: 'Hedged' }], hedgingPolicy: { maxAttempts: 2 } },
      { name: [{ service: 'a.S', method: 'Plain' }] },
      { name: [{}], retryPolicy },
    ],
  });
  const method = (service: string, name: string, idempotency: ProtoMethod['idempotency']): ProtoMethod => ({
    service,
    method: name,
    idempotency,
  });

  it('names each unsafe covered method with the entry and name that cover it', () => {
    expect(
      findUnsafeRetriedMethods(config, [
        method('a.S', 'Write', 'IDEMPOTENCY_UNKNOWN'),
        method('a.S', 'Read', 'NO_SIDE_EFFECTS'),
        method('a.S', 'Hedged', 'IDEMPOTENCY_UNKNOWN'),
        method('a.S', 'Plain', 'IDEMPOTENCY_UNKNOWN'),
        method('b.T', 'Any', 'IDEMPOTENCY_UNKNOWN'),
        method('b.T', 'Put', 'IDEMPOTENT'),
      ]),
    ).toEqual([
      {
        service: 'a.S',
        method: 'Write',
        idempotency: 'IDEMPOTENCY_UNKNOWN',
        policy: 'retry',
        methodConfigIndex: 0,
        nameIndex: 1,
      },
      {
        service: 'a.S',
        method: 'Hedged',
        idempotency: 'IDEMPOTENCY_UNKNOWN',
        policy: 'hedging',
        methodConfigIndex: 1,
        nameIndex: 0,
      },
      {
        service: 'b.T',
        method: 'Any',
        idempotency: 'IDEMPOTENCY_UNKNOWN',
        policy: 'retry',
        methodConfigIndex: 3,
        nameIndex: 0,
      },
    ]);
  });

  it('finds nothing when no policy applies', () => {
    expect(
      findUnsafeRetriedMethods(parseServiceConfig({}), [method('a.S', 'M', 'IDEMPOTENCY_UNKNOWN')]),
    ).toEqual([]);
  });
});
