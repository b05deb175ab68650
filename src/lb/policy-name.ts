/** The replica-avoiding policy's name in `loadBalancingConfig`. */
export const AVOID_TRIED_REPLICAS_POLICY = 'grpc_retry_hedging.avoid_tried_replicas';
