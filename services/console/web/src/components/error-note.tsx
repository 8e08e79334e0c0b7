export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {(error as Error).message ?? String(error)}
    </p>
  );
}
