// Hash routing: the server serves index.html only; `#/runs/<id>` and the like choose the page.
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { page: "signin" }
  | { page: "keys" }
  | { page: "usage" }
  | { page: "plan" }
  | { page: "runs" }
  | { page: "run"; id: string }
  | { page: "quickstart" }
  | { page: "operator-organizations" }
  | { page: "operator-organization"; id: string }
  | { page: "operator-workers" }
  | { page: "operator-payments" }
  | { page: "unknown"; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "").replace(/\/+$/, "") || "/";
  const parts = path.split("/").filter(Boolean).map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  const [first, second, third] = parts;
  if (parts.length === 0) return { page: "unknown", path: "/" };
  if (parts.length === 1) {
    if (first === "signin" || first === "keys" || first === "usage" || first === "plan" || first === "runs" || first === "quickstart") return { page: first };
  }
  if (first === "runs" && parts.length === 2 && second) return { page: "run", id: second };
  if (first === "operator" && parts.length === 2) {
    if (second === "organizations") return { page: "operator-organizations" };
    if (second === "workers") return { page: "operator-workers" };
    if (second === "payments") return { page: "operator-payments" };
  }
  if (first === "operator" && second === "organizations" && parts.length === 3 && third) return { page: "operator-organization", id: third };
  return { page: "unknown", path };
}

export function href(path: string): string {
  return `#${path}`;
}

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, "", `${location.pathname}${location.search}#${path}`);
  else location.hash = path;
  if (replace) window.dispatchEvent(new HashChangeEvent("hashchange"));
}

export function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return hash;
}
