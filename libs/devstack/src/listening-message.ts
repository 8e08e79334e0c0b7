/** What a devstack child sends its parent over IPC for each TCP port it binds (parent-guard.ts). */
export const LISTENING_MESSAGE = "devstack:listening";

export interface ListeningMessage {
  type: typeof LISTENING_MESSAGE;
  port: number;
}

export function isListeningMessage(value: unknown): value is ListeningMessage {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === LISTENING_MESSAGE &&
    typeof (value as { port?: unknown }).port === "number"
  );
}
