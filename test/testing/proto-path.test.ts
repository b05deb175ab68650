/** The protos the package ships, found from the running module wherever the build put it. */
import { readFileSync } from 'node:fs';
import * as protoLoader from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import { flakyTestProtoPath, greeterProtoPath } from '../../src/testing/proto-path.js';

describe('shipped proto paths', () => {
  it('greeterProtoPath is the hello-world Greeter the README quick start serves and calls', () => {
    const path = greeterProtoPath();
    expect(path).toMatch(/[/\\]examples[/\\]helloworld\.proto$/);
    const definition = protoLoader.loadSync(path);
    expect(Object.keys(definition['helloworld.Greeter'] as object).sort()).toEqual([
      'GetCached',
      'SayHello',
      'StreamHellos',
    ]);
    expect(greeterProtoPath()).toBe(path);
  });

  it('flakyTestProtoPath is the FlakyTest service, a different file', () => {
    expect(flakyTestProtoPath()).toMatch(/[/\\]protos[/\\]flaky_test\.proto$/);
    expect(readFileSync(flakyTestProtoPath(), 'utf8')).toContain('service FlakyTest');
    expect(flakyTestProtoPath()).not.toBe(greeterProtoPath());
  });
});
