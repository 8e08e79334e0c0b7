import { render } from "preact";
import "@picocss/pico/css/pico.min.css";
import "./styles.css";
import { App } from "./app.tsx";
import { loadRuntimeConfig } from "./runtime-config.ts";

const root = document.getElementById("app")!;
loadRuntimeConfig().then(
  (config) => render(<App config={config} />, root),
  (err: unknown) => {
    root.textContent = `The console could not load its settings: ${(err as Error).message}`;
  },
);
