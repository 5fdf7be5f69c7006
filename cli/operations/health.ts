/** `GET <url>/health` for `hookagent status`, deployed or local: its answer, or why there was none. */
export interface Health { ok: boolean; status: number | null; error?: string }

export async function checkHealth(url: string, timeoutMs: number): Promise<Health> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    return { ok: response.status === 200, status: response.status };
  } catch (error) {
    return { ok: false, status: null, error: `${error instanceof Error ? error.name : 'Error'}: ${error instanceof Error ? error.message : String(error)}` };
  }
}
