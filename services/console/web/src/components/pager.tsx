export function Pager({
  offset,
  limit,
  total,
  onPage,
}: {
  offset: number;
  limit: number;
  total: number;
  onPage(offset: number): void;
}) {
  const from = total === 0 ? 0 : offset + 1;
  const to = Math.min(offset + limit, total);
  return (
    <div class="pager" data-testid="pager">
      <button
        type="button"
        class="secondary outline"
        disabled={offset === 0}
        onClick={() => onPage(Math.max(0, offset - limit))}
        data-testid="page-prev"
      >
        ← Newer
      </button>
      <span>
        {from}–{to} of {total}
      </span>
      <button
        type="button"
        class="secondary outline"
        disabled={to >= total}
        onClick={() => onPage(offset + limit)}
        data-testid="page-next"
      >
        Older →
      </button>
    </div>
  );
}
