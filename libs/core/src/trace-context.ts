// W3C trace context (docs/api.md "Requests"). The traceparent format is strict (version 00,
// 32-hex trace id, 16-hex parent id, 2-hex flags, neither id all zeros); a header that
// breaks it is ignored and a new trace starts, never an error.

export interface TraceParent {
  traceId: string;
  parentId: string;
  flags: string;
}

const TRACEPARENT_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function parseTraceparent(header: string | undefined | null): TraceParent | undefined {
  if (typeof header !== "string") return undefined;
  const m = TRACEPARENT_RE.exec(header.trim());
  if (!m) return undefined;
  const [, traceId, parentId, flags] = m as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { traceId, parentId, flags };
}

export function formatTraceparent(tp: TraceParent): string {
  return `00-${tp.traceId}-${tp.parentId}-${tp.flags}`;
}
