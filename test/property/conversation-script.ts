import { fc } from '@fast-check/vitest';
import * as grpc from '@grpc/grpc-js';
import { CALL_TYPES, type CallType, requestStreams, responseStreams } from './script-service.js';

/**
 * A call script for property 1: a conversation between the client and the server, one step at a time. Each side
 * performs its step only after it has observed every earlier step of the other side (the runner waits for that),
 * so the outcome of a script does not depend on timing: run twice, bare, it gives the same observation.
 */
export type ClientStep =
  | {
      readonly by: 'client';
      readonly do: 'write';
      readonly size: number;
      readonly awaitCallback: boolean;
      /** Written with no callback (`call.write(message)`): nothing to await. */
      readonly noCallback?: boolean;
    }
  | { readonly by: 'client'; readonly do: 'pause'; readonly ms: number }
  | { readonly by: 'client'; readonly do: 'end' };
export type ServerStep =
  | { readonly by: 'server'; readonly do: 'headers' }
  /** A response message: a copy of the last request message received (echo), or `size` fresh bytes. */
  | { readonly by: 'server'; readonly do: 'send'; readonly echo: boolean; readonly size: number }
  | { readonly by: 'server'; readonly do: 'pause'; readonly ms: number };
export type Step = ClientStep | ServerStep;

/** How the conversation ends. */
export type Ending =
  /** The server ends the call; for an OK unary-response method, its response reports what it received. */
  | {
      readonly by: 'server';
      readonly do: 'status';
      readonly code: grpc.status;
      readonly details: string;
      readonly trailers: boolean;
      readonly size: number;
    }
  /** The client cancels; `inListener`: synchronously inside the event handler that saw the server's last step. */
  | { readonly by: 'client'; readonly do: 'cancel'; readonly inListener: boolean }
  /** Nobody ends it: the call's (short) deadline does. */
  | { readonly by: 'deadline' };

export interface ConversationScript {
  readonly type: CallType;
  /** Size of the single request of a unary or server-streaming call. */
  readonly request: number;
  readonly steps: readonly Step[];
  readonly ending: Ending;
  /** After the call has ended the client still calls `end()` (streamed requests) and/or `cancel()`. */
  readonly endAfterwards: boolean;
  readonly cancelAfterwards: boolean;
}

/** The code that no script produces: the policies of property 1 retry (or hedge on) only this one. */
export const NEVER_PRODUCED_CODE = grpc.status.DATA_LOSS;

/** Details strings worth trying: empty, plain, whitespace and non-ASCII (interop's special_status_message), long. */
export const DETAILS = [
  '',
  'scripted failure',
  '\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n',
  'x'.repeat(500),
];

/** 0 B to 64 KiB, mostly small (large messages cost time and say little more). */
export const messageSize = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 64 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 65536 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, 65536) },
);

const pauseMs = fc.integer({ min: 0, max: 10 });

const rawStep: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      by: fc.constant('client' as const),
      do: fc.constant('write' as const),
      size: messageSize,
      awaitCallback: fc.boolean(),
      noCallback: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      by: fc.constant('client' as const),
      do: fc.constant('pause' as const),
      ms: pauseMs,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ by: 'client' as const, do: 'end' as const }) },
  { weight: 1, arbitrary: fc.constant({ by: 'server' as const, do: 'headers' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      by: fc.constant('server' as const),
      do: fc.constant('send' as const),
      echo: fc.boolean(),
      size: messageSize,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      by: fc.constant('server' as const),
      do: fc.constant('pause' as const),
      ms: pauseMs,
    }),
  },
);

const statusCode = fc.integer({ min: 0, max: 16 }).filter((code) => code !== NEVER_PRODUCED_CODE);

const ending: fc.Arbitrary<Ending> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      by: fc.constant('server' as const),
      do: fc.constant('status' as const),
      code: fc.oneof(fc.constant(grpc.status.OK), statusCode),
      details: fc.constantFrom(...DETAILS),
      trailers: fc.boolean(),
      size: messageSize,
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      by: fc.constant('client' as const),
      do: fc.constant('cancel' as const),
      inListener: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ by: 'deadline' as const }) },
);

/**
 * Drops the steps a call type cannot take, so that any generated (or shrunk) list is a valid script: writes and
 * `end()` only on streamed requests and never after `end()`; headers only before the first response message;
 * response messages only on streamed responses; in-listener cancels only right after a server step the client sees;
 * a write made with no callback is not awaited.
 */
export function normalizeScript(script: ConversationScript): ConversationScript {
  const steps: Step[] = [];
  let ended = !requestStreams(script.type);
  let headersOrMessage = false;
  for (const step of script.steps) {
    if (step.by === 'client' && (step.do === 'write' || step.do === 'end')) {
      if (ended) {
        continue;
      }
      ended = step.do === 'end';
      if (step.do === 'write' && step.noCallback && step.awaitCallback) {
        steps.push({ ...step, awaitCallback: false });
        continue;
      }
    } else if (step.by === 'server' && step.do === 'headers') {
      if (headersOrMessage) {
        continue;
      }
      headersOrMessage = true;
    } else if (step.by === 'server' && step.do === 'send') {
      if (!responseStreams(script.type)) {
        continue;
      }
      headersOrMessage = true;
    }
    steps.push(step);
  }
  let end = script.ending;
  const last = steps.at(-1);
  if (end.by === 'client' && end.inListener && !(last?.by === 'server' && last.do !== 'pause')) {
    end = { ...end, inListener: false };
  }
  if (end.by === 'server' && end.code === grpc.status.OK) {
    end = { ...end, details: '' };
  }
  return { ...script, steps, ending: end };
}

/** Scripts of one call type, or of all four. */
export function conversationScript(type?: CallType): fc.Arbitrary<ConversationScript> {
  return fc
    .record({
      type: type ? fc.constant(type) : fc.constantFrom(...CALL_TYPES),
      request: messageSize,
      steps: fc.array(rawStep, { maxLength: 10 }),
      ending,
      endAfterwards: fc.boolean(),
      cancelAfterwards: fc.boolean(),
    })
    .map(normalizeScript);
}
