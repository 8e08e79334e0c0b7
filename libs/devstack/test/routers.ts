import { startNginxRouter, startRouter, type Router, type RouterOptions } from "../src/index.ts";

/** Both public routers, by name: the router suites run every case against each (docs/decisions.md "nginx on the public port"). */
export const ROUTERS: Record<"node" | "nginx", (options: RouterOptions) => Promise<Router>> = {
  node: startRouter,
  nginx: startNginxRouter,
};
export const ROUTER_KINDS = Object.keys(ROUTERS) as (keyof typeof ROUTERS)[];
