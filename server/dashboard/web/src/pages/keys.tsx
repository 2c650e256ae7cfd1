import { useState } from "preact/hooks";
import { useReady, useTitle } from "../components";
import { KeysPanel } from "./keys-panel";

export function KeysPage() {
  useTitle("API keys");
  const [loaded, setLoaded] = useState(false);
  useReady(loaded);
  return (
    <>
      <h1>API keys</h1>
      <p class="lead">Inference keys call loom's API (OpenAI and Anthropic formats). A key's secret is shown once, when it is created.</p>
      <KeysPanel base="/api/v1/dashboard/keys" operator={false} onLoaded={() => setLoaded(true)} />
    </>
  );
}
