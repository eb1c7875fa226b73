// What ties a tool call to the executions and approvals it caused: a run's result names them (execution_id,
// approval_id, also nested, as in an approve reply or inspect_path's rows). Pure, so the timeline that reads it
// can be tested without a browser.
export interface Caused {
  executions: string[];
  approvals: string[];
}

/** Ids named anywhere in the first few levels of a tool call's result. */
export function causedBy(result: unknown): Caused {
  const found: Caused = { executions: [], approvals: [] };
  const visit = (value: unknown, depth: number) => {
    if (depth > 3 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value.slice(0, 100)) visit(v, depth + 1);
      return;
    }
    for (const [key, v] of Object.entries(value)) {
      if (key === 'execution_id' && typeof v === 'string' && !found.executions.includes(v)) found.executions.push(v);
      else if (key === 'approval_id' && typeof v === 'string' && !found.approvals.includes(v)) found.approvals.push(v);
      else visit(v, depth + 1);
    }
  };
  visit(result, 0);
  return found;
}
