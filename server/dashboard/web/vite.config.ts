// Builds the dashboard's static files: `npm run build:dashboard` writes dist/dashboard/ (index.html and
// assets/*-[hash].js|css), which loom serves at /dashboard/. TSX goes through Vite's own esbuild (Preact's automatic
// JSX runtime), so no framework plugin is needed. `npx vite --config server/dashboard/web/vite.config.ts`
// runs a dev server that forwards the API to a `loom serve` on :8080 (LOOM_URL to point elsewhere).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));
const loom = process.env.LOOM_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  root: here,
  base: "/dashboard/",
  publicDir: false,
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: fileURLToPath(new URL("../../../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    target: "es2020",
    // The page's Content-Security-Policy has no 'unsafe-inline': no inline polyfill script, no data: assets.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    sourcemap: false,
    reportCompressedSize: true,
  },
  server: {
    proxy: { "/api": { target: loom, changeOrigin: false } },
  },
});
