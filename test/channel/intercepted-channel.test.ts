/**
 * `interceptChannel` without a network: a fake channel records the calls the chain makes, so that what reaches
 * the interceptors (options) and what reaches the channel (method, deadline, host, parent, flags, credentials) can
 * be read exactly. The end-to-end cases, against grpc-js channels and servers, are in
 * intercepted-channel.e2e.test.ts and parent-call.e2e.test.ts.
 */
import {
  type CallCredentials,
  type Channel,
  connectivityState,
  credentials,
  type InterceptingCall,
  type InterceptingListener,
  type Interceptor,
  type InterceptorOptions,
  Metadata,
  type StatusObject,
  status,
} from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { interceptChannel } from '../../src/channel/intercepted-channel.js';

interface MadeCall {
  args: unknown[];
  credentials: CallCredentials[];
  listener: InterceptingListener | undefined;
  sent: Array<{ context: object; message: Buffer }>;
  cancelled: Array<[number, string]>;
  halfClosed: number;
  reads: number;
}

/** A channel whose createCall records each call and hands back a fake one. */
function fakeChannel(
  options: { state?: connectivityState; authContext?: boolean; throwOnCreate?: Error } = {},
) {
  const made: MadeCall[] = [];
  const channel = {
    getTarget: () => 'dns:fake:50051',
    getConnectivityState: () => options.state ?? connectivityState.READY,
    close: () => {},
    createCall(...args: unknown[]) {
      if (options.throwOnCreate) {
        throw options.throwOnCreate;
      }
      const record: MadeCall = {
        args,
        credentials: [],
        listener: undefined,
        sent: [],
        cancelled: [],
        halfClosed: 0,
        reads: 0,
      };
      made.push(record);
      return {
        start: (_md: Metadata, listener: InterceptingListener) => {
          record.listener = listener;
        },
        sendMessageWithContext: (context: object, message: Buffer) => record.sent.push({ context, message }),
        startRead: () => {
          record.reads += 1;
        },
        halfClose: () => {
          record.halfClosed += 1;
        },
        cancelWithStatus: (code: number, details: string) => record.cancelled.push([code, details]),
        getPeer: () => '127.0.0.1:50051',
        setCredentials: (c: CallCredentials) => record.credentials.push(c),
        ...(options.authContext ? { getAuthContext: () => ({ transportSecurityType: 'ssl' }) } : {}),
      };
    },
  };
  return { channel: channel as unknown as Channel, made };
}

/** An interceptor that records the options it was handed and passes the call on. */
function recording(
  seen: InterceptorOptions[],
  change?: (o: InterceptorOptions) => InterceptorOptions,
): Interceptor {
  return (options, next) => {
    seen.push(options);
    // grpc-js only uses the InterceptingCall interface of what an interceptor returns.
    return next(change ? change(options) : options) as InterceptingCall;
  };
}

describe('interceptChannel: its arguments', () => {
  it.each([
    ['undefined', undefined, 'nothing'],
    ['null', null, 'null'],
    ['a string', 'dns:host:443', '"dns:host:443"'],
    ['an object without createCall', { getTarget: () => 'x' }, '{"getTarget":a function}'],
    ['an object whose createCall is not a function', { createCall: 'yes' }, '{"createCall":"yes"}'],
  ])('a channel that is %s is refused, saying what it got', (_name, channel, got) => {
    expect(() => interceptChannel(channel as never, [])).toThrow(
      new TypeError(
        `interceptChannel: \`channel\` must be a grpc-js Channel (with a createCall method), got ${got}`,
      ),
    );
  });

  it('refuses interceptors that are not an array of functions, naming the entry', () => {
    const { channel } = fakeChannel();
    expect(() => interceptChannel(channel, {} as never)).toThrow(
      new TypeError('interceptChannel: `interceptors` must be an array of grpc-js interceptors, got {}'),
    );
    expect(() => interceptChannel(channel, [(o, n) => n(o) as InterceptingCall, 'retry' as never])).toThrow(
      new TypeError('interceptChannel: interceptors[1] is not a function (got string)'),
    );
  });
});

describe('interceptChannel: a call through the chain', () => {
  it('numbers its calls 1, 2, ... and builds no chain before the first operation', () => {
    const { channel, made } = fakeChannel();
    const seen: InterceptorOptions[] = [];
    const wrapped = interceptChannel(channel, [recording(seen)]);
    const first = wrapped.createCall('/pkg.S/M', Infinity, null, null, null);
    const second = wrapped.createCall('/pkg.S/M', Infinity, null, null, null);
    expect([first.getCallNumber(), second.getCallNumber()]).toEqual([1, 2]);
    expect(seen).toHaveLength(0);
    expect(made).toHaveLength(0);
  });

  it('hands the interceptors the host, the parent, the flags (0 included) and the credentials set after creation', () => {
    const { channel, made } = fakeChannel();
    const seen: InterceptorOptions[] = [];
    const wrapped = interceptChannel(channel, [recording(seen)]);
    const parent = { getDeadline: () => Infinity } as never;
    const callCredentials = credentials.createFromMetadataGenerator((_p, cb) => cb(null, new Metadata()));
    const call = wrapped.createCall('/pkg.S/M', 12_345, 'host.example', parent, 0);
    call.setCredentials(callCredentials);
    call.start(new Metadata(), {} as unknown as InterceptingListener);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      deadline: 12_345,
      host: 'host.example',
      parent,
      propagate_flags: 0,
      credentials: callCredentials,
    });
    expect(seen[0]?.method_definition.path).toBe('/pkg.S/M');
    expect(made[0]?.args).toEqual(['/pkg.S/M', 12_345, 'host.example', parent, 0]);
    expect(made[0]?.credentials).toEqual([callCredentials]);
  });

  it('leaves out what the call was created without: no host, parent, flags or credentials keys', () => {
    const { channel, made } = fakeChannel();
    for (const flags of [null, undefined]) {
      const seen: InterceptorOptions[] = [];
      const wrapped = interceptChannel(channel, [recording(seen)]);
      wrapped
        .createCall('/pkg.S/M', Infinity, null, null, flags)
        .start(new Metadata(), {} as unknown as InterceptingListener);
      expect(Object.keys(seen[0] ?? {}).sort()).toEqual(['deadline', 'method_definition']);
    }
    expect(made.map((m) => m.credentials)).toEqual([[], []]);
  });

  it('makes the channel call with what the interceptors handed down, not what the call was created with', () => {
    const { channel, made } = fakeChannel();
    const wrapped = interceptChannel(channel, [
      recording([], (o) => ({ ...o, host: 'other.example', deadline: 99, propagate_flags: 4 })),
    ]);
    wrapped
      .createCall('/pkg.S/M', 12_345, 'host.example', null, 7)
      .start(new Metadata(), {} as unknown as InterceptingListener);
    expect(made[0]?.args).toEqual(['/pkg.S/M', 99, 'other.example', null, 4]);
  });

  it('passes every operation to the channel call, and every answer back to the listener', () => {
    const { channel, made } = fakeChannel();
    const wrapped = interceptChannel(channel, [recording([])]);
    const call = wrapped.createCall('/pkg.S/M', Infinity, null, null, null);
    const heard: unknown[] = [];
    call.start(new Metadata(), {
      onReceiveMetadata: (md: Metadata) => heard.push(md),
      onReceiveMessage: (m: unknown) => heard.push(m),
      onReceiveStatus: (s: StatusObject) => heard.push(s.code),
    } as unknown as InterceptingListener);
    call.sendMessageWithContext({}, Buffer.from('a'));
    call.startRead();
    call.halfClose();
    call.cancelWithStatus(status.CANCELLED, 'by the test');
    const channelCall = made[0]!;
    expect(channelCall.sent.map((s) => s.message.toString())).toEqual(['a']);
    expect([channelCall.reads, channelCall.halfClosed]).toEqual([1, 1]);
    expect(channelCall.cancelled).toEqual([[status.CANCELLED, 'by the test']]);
    const md = new Metadata();
    channelCall.listener?.onReceiveMetadata(md);
    channelCall.listener?.onReceiveMessage(Buffer.from('r'));
    channelCall.listener?.onReceiveStatus({ code: status.OK, details: '', metadata: md });
    expect(heard).toEqual([md, Buffer.from('r'), status.OK]);
  });

  it("an interceptor's sendMessage reaches the channel call as a write without a callback", () => {
    const { channel, made } = fakeChannel();
    const wrapped = interceptChannel(channel, [
      (options, next) => {
        const inner = next(options);
        return {
          ...inner,
          start: (md: Metadata, l: InterceptingListener) => inner.start(md, l),
          sendMessageWithContext: (_context: object, message: Buffer) => inner.sendMessage(message),
        } as never;
      },
    ]);
    const call = wrapped.createCall('/pkg.S/M', Infinity, null, null, null);
    call.start(new Metadata(), {} as unknown as InterceptingListener);
    call.sendMessageWithContext({ callback: () => {} }, Buffer.from('b'));
    expect(made[0]?.sent).toEqual([{ context: {}, message: Buffer.from('b') }]);
  });

  it('a listener without some of its methods is not called for them', () => {
    const { channel, made } = fakeChannel();
    const wrapped = interceptChannel(channel, [recording([])]);
    const statuses: number[] = [];
    wrapped.createCall('/pkg.S/M', Infinity, null, null, null).start(new Metadata(), {
      onReceiveStatus: (s: StatusObject) => statuses.push(s.code),
    } as unknown as InterceptingListener);
    const listener = made[0]?.listener;
    expect(() => {
      listener?.onReceiveMetadata(new Metadata());
      listener?.onReceiveMessage(Buffer.from('r'));
    }).not.toThrow();
    listener?.onReceiveStatus({ code: status.OK, details: '', metadata: new Metadata() });
    expect(statuses).toEqual([status.OK]);
  });

  it('an interceptor that starts the channel call with no listener, or an empty one, throws nothing on answers', () => {
    for (const listener of [undefined, {}]) {
      const { channel, made } = fakeChannel();
      const wrapped = interceptChannel(channel, [
        (options, next) => {
          const inner = next(options);
          return { ...inner, start: (md: Metadata) => inner.start(md, listener as never) } as never;
        },
      ]);
      wrapped.createCall('/pkg.S/M', Infinity, null, null, null).start(new Metadata(), {} as never);
      const heard = made[0]?.listener;
      expect(() => {
        heard?.onReceiveMetadata(new Metadata());
        heard?.onReceiveMessage(Buffer.from('r'));
        heard?.onReceiveStatus({ code: status.OK, details: '', metadata: new Metadata() });
      }).not.toThrow();
    }
  });

  it("names the channel's target as its peer before the start, the channel call's after; auth context likewise", () => {
    for (const authContext of [false, true]) {
      const { channel } = fakeChannel({ authContext });
      const call = interceptChannel(channel, [recording([])]).createCall(
        '/pkg.S/M',
        Infinity,
        null,
        null,
        null,
      );
      expect(call.getPeer()).toBe('dns:fake:50051');
      expect(call.getAuthContext()).toBeNull();
      call.start(new Metadata(), {} as unknown as InterceptingListener);
      expect(call.getPeer()).toBe('127.0.0.1:50051');
      expect(call.getAuthContext()).toEqual(authContext ? { transportSecurityType: 'ssl' } : null);
    }
  });

  it("on a channel already shut down, the call is the channel's own (its error when it is made)", () => {
    const refused = new Error('Channel has been shut down');
    const { channel } = fakeChannel({ state: connectivityState.SHUTDOWN, throwOnCreate: refused });
    const seen: InterceptorOptions[] = [];
    const wrapped = interceptChannel(channel, [recording(seen)]);
    expect(() => wrapped.createCall('/pkg.S/M', Infinity, null, null, null)).toThrow(refused);
    expect(seen).toEqual([]);
  });

  it('a chain that throws when it is made ends the call with UNAVAILABLE, on the next tick', async () => {
    const { channel } = fakeChannel();
    const wrapped = interceptChannel(channel, [
      () => {
        throw new Error('interceptor failed');
      },
    ]);
    const statuses: StatusObject[] = [];
    wrapped.createCall('/pkg.S/M', Infinity, null, null, null).start(new Metadata(), {
      onReceiveStatus: (s: StatusObject) => statuses.push(s),
    } as unknown as InterceptingListener);
    expect(statuses).toEqual([]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(statuses.map((s) => [s.code, s.details])).toEqual([[status.UNAVAILABLE, 'interceptor failed']]);
  });
});
