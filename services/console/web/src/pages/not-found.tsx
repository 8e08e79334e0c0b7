import { href } from "../client-context.ts";

export function NotFound() {
  return (
    <article data-testid="not-found">
      <h2>Not found</h2>
      <p>
        There is no page here. <a href={href("/")}>Back to the tasks</a>.
      </p>
    </article>
  );
}
