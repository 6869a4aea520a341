/**
 * One request the model decides (explain builds it from the flags, replay from a log line). Types only.
 */
/** One request as a client sends it, at a time. */
export interface ProveRequest {
    method?: string;
    /** The request path as sent, query included. */
    path: string;
    /** The Host (`:authority`); absent: the first host of the program's first gateway. */
    host?: string;
    /** Request headers, lower-case names. */
    headers?: Record<string, string | string[]>;
    /** The trusted client address (what the gateway's `remote_address` sends). */
    clientAddress?: string;
    /** When the request arrives (ms since the epoch). */
    timeMs: number;
    /** The service the gateway routes it to (`<service>.<namespace>:<port>` or Istio's cluster name): its workload's local bucket applies. */
    upstream?: string;
    /**
     * The claims of the request's token as the gateway's JWT filter verified it (`--claim`, a log's
     * recorded claim), `iss` defaulting to the program's one issuer; absent: no verified token.
     */
    claims?: Record<string, string>;
    /** The request's token is not known (a log that records no verified claim, a token explain cannot verify): identity rules count it as unknown. */
    claimsUnknown?: string;
    /**
     * Replay's id of the request's shape (prove/log-table.ts): requests of one id differ only in
     * their time and client, so a Simulator plans them once. Absent: planned by their fields.
     */
    shape?: number;
    /** The request's token failed the gateway's JWT filter (prove/jwt-verify.ts): answered 401 before any rate limit. */
    tokenRejected?: { reason: string; requestAuthentication?: string };
}
