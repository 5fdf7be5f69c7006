// The part of autocannon's API the bench uses (the package ships no types).
declare module 'autocannon' {
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
  }
  export interface Histogram { average: number; p50: number; p99: number; max: number }
  export interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    throughput: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    '2xx': number;
    duration: number;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: Request[];
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
