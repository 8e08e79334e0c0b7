import { statusName } from "../format.ts";

export function StatusBadge({ status }: { status: string }) {
  const name = statusName(status);
  return (
    <span class={`badge status-${name.toLowerCase()}`} data-testid="status">
      {name}
    </span>
  );
}
