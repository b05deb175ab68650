import * as grpc from '@grpc/grpc-js';

/** Binds `server` to a free port on 127.0.0.1 (insecure) and resolves with the port. */
export function bindLocal(server: grpc.Server): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
}
