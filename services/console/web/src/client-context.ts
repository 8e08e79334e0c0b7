import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { ApiClient } from "./api.ts";

export const ClientContext = createContext<ApiClient | null>(null);

export function useClient(): ApiClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error("useClient outside a signed-in page");
  return client;
}

/** Where the console lives (`/console/`), for links. */
export const BASE = import.meta.env.BASE_URL.replace(/\/$/, "");
export const href = (path: string) => `${BASE}${path}`;
