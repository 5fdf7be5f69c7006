/** Subscription event filters: `pull_request` matches every action, `pull_request.opened` one. */
export function filterMatches(filter: string, event: string, action: string | undefined): boolean {
  if (filter === '*' || filter === event) return true;
  const dot = filter.indexOf('.');
  if (dot < 0) return false;
  return filter.slice(0, dot) === event && action !== undefined && filter.slice(dot + 1) === action;
}

/** An empty filter list matches every event. */
export function eventMatches(filters: readonly string[], event: string, action: string | undefined): boolean {
  return filters.length === 0 || filters.some((filter) => filterMatches(filter, event, action));
}
