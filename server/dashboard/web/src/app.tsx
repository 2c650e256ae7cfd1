// The app: the session decides between the sign-in page and the signed-in shell (header, nav, main), and the hash
// picks the page. A 401 from any call ends the session here ("your session ended").
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { api, setCsrfToken, setUnauthorizedHandler, ApiError, errorText } from "./api";
import { ShellContext, type Shell } from "./components";
import { href, navigate, parseRoute, useHash, type Route } from "./router";
import type { Session, SessionAnswer } from "./types";
import { SignIn } from "./pages/sign-in";
import { KeysPage } from "./pages/keys";
import { UsagePage } from "./pages/usage";
import { PlanPage } from "./pages/plan";
import { RunsPage } from "./pages/runs";
import { RunPage } from "./pages/run";
import { QuickStartPage } from "./pages/quick-start";
import { OrganizationsPage } from "./pages/operator-organizations";
import { OrganizationPage } from "./pages/operator-organization";
import { WorkersPage } from "./pages/operator-workers";
import { PaymentsPage } from "./pages/operator-payments";

type State = { state: "loading" } | { state: "signed-out"; message?: string } | { state: "signed-in"; session: Session };

const ORGANIZATION_NAV = [
  { path: "/usage", label: "Usage", id: "usage" },
  { path: "/keys", label: "API keys", id: "keys" },
  { path: "/runs", label: "Runs", id: "runs" },
  { path: "/plan", label: "Plan and limits", id: "plan" },
  { path: "/quickstart", label: "Quick start", id: "quickstart" },
];

const OPERATOR_NAV = [
  { path: "/operator/organizations", label: "Organizations", id: "operator-organizations" },
  { path: "/operator/workers", label: "Models and workers", id: "operator-workers" },
  { path: "/operator/payments", label: "Payments", id: "operator-payments" },
];

const ORGANIZATION_PAGES = new Set(["keys", "usage", "plan", "runs", "run", "quickstart"]);
const OPERATOR_PAGES = new Set(["operator-organizations", "operator-organization", "operator-workers", "operator-payments"]);

function homeOf(session: Session): string {
  return session.kind === "operator" ? "/operator/organizations" : "/usage";
}

/** Whether the route is one of this session's pages (anything else goes to its home). */
function allowed(route: Route, session: Session): boolean {
  return session.kind === "operator" ? OPERATOR_PAGES.has(route.page) : ORGANIZATION_PAGES.has(route.page);
}

export function App() {
  const [state, setState] = useState<State>({ state: "loading" });
  const hash = useHash();
  const route = useMemo(() => parseRoute(hash), [hash]);

  const ended = useCallback((message?: string) => {
    setCsrfToken(undefined);
    setState({ state: "signed-out", message });
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() => ended("Your session ended. Sign in again to continue."));
    const controller = new AbortController();
    api<SessionAnswer>("GET", "/api/v1/dashboard/session", undefined, { signal: controller.signal, sessionCall: true }).then(
      (answer) => {
        setCsrfToken(answer.csrfToken);
        setState({ state: "signed-in", session: answer.session });
      },
      (error) => {
        if (controller.signal.aborted) return;
        if (error instanceof ApiError && error.status === 401) ended();
        else ended(`The session could not be checked: ${errorText(error)}`);
      },
    );
    return () => controller.abort();
  }, []);

  const signedIn = (answer: SessionAnswer) => {
    setCsrfToken(answer.csrfToken);
    setState({ state: "signed-in", session: answer.session });
    const current = parseRoute(location.hash);
    if (!allowed(current, answer.session)) navigate(homeOf(answer.session), true);
  };

  /** Signs out; resolves with why the server did not end the session (the page then stays signed in), or undefined. */
  const signOut = async (): Promise<string | undefined> => {
    try {
      await api("DELETE", "/api/v1/dashboard/session", undefined, { sessionCall: true });
    } catch (error) {
      // A 401: the session had ended already. Anything else: the cookie's session still lives on the server, so
      // saying "signed out" would be false (a reload would sign the user back in).
      if (!(error instanceof ApiError && error.status === 401)) return `Not signed out: ${errorText(error)}`;
    }
    ended("You are signed out.");
    navigate("/signin", true);
    return undefined;
  };

  // A signed-in session on a page not its own (or the sign-in route) goes to its home.
  useEffect(() => {
    if (state.state === "signed-in" && !allowed(route, state.session)) navigate(homeOf(state.session), true);
  }, [state, route]);

  if (state.state === "loading") {
    return (
      <main id="main" class="main main-center" aria-busy="true">
        <p class="loading">Loading…</p>
      </main>
    );
  }
  if (state.state === "signed-out") return <SignIn message={state.message} onSignedIn={signedIn} />;
  return <Shell session={state.session} route={route} onSignOut={signOut} />;
}

function Shell({ session, route, onSignOut }: { session: Session; route: Route; onSignOut: () => Promise<string | undefined> }) {
  const routeKey = JSON.stringify(route);
  const [signOutError, setSignOutError] = useState<string | undefined>(undefined);
  const [readyKey, setReadyKey] = useState("");
  const [announcement, setAnnouncement] = useState("");
  const announce = useCallback((message: string) => {
    // Cleared first so that the same message twice is announced twice.
    setAnnouncement("");
    setTimeout(() => setAnnouncement(message), 50);
  }, []);
  const shell = useMemo<Shell>(() => ({ setReady: setReadyKey, routeKey, announce }), [routeKey, announce]);

  const nav = session.kind === "operator" ? OPERATOR_NAV : ORGANIZATION_NAV;
  const currentSection = route.page === "run" ? "runs" : route.page === "operator-organization" ? "operator-organizations" : route.page;
  return (
    <ShellContext.Provider value={shell}>
      <header class="header">
        <div class="header-inner">
          <a class="brand" href={href(homeOf(session))} data-testid="brand">
            loom <span class="brand-sub">dashboard</span>
          </a>
          <p class="who" data-testid="who">
            {session.kind === "operator" ? (
              <span>Operator</span>
            ) : (
              <span>
                <span class="visually-hidden">Organization: </span>
                {session.organization.name}
              </span>
            )}
          </p>
          <button type="button" class="button sign-out" onClick={async () => setSignOutError(await onSignOut())} data-testid="sign-out">
            Sign out
          </button>
        </div>
        {signOutError !== undefined && (
          <p class="header-error" role="alert" data-testid="sign-out-error">
            {signOutError}
          </p>
        )}
        <nav id="nav" class="nav" aria-label="Dashboard">
          <ul>
            {nav.map((item) => (
              <li key={item.id}>
                <a href={href(item.path)} aria-current={currentSection === item.id ? "page" : undefined} data-testid={`nav-${item.id}`}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" class="main" data-ready={readyKey === routeKey ? "true" : "false"} data-page={route.page}>
        <Page key={routeKey} route={route} session={session} />
      </main>
      <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true" data-testid="announcer">
        {announcement}
      </div>
    </ShellContext.Provider>
  );
}

function Page({ route, session }: { route: Route; session: Session }) {
  if (!allowed(route, session)) return <p class="loading">Loading…</p>;
  switch (route.page) {
    case "keys":
      return <KeysPage />;
    case "usage":
      return <UsagePage />;
    case "plan":
      return <PlanPage />;
    case "runs":
      return <RunsPage />;
    case "run":
      return <RunPage id={route.id} />;
    case "quickstart":
      return <QuickStartPage />;
    case "operator-organizations":
      return <OrganizationsPage />;
    case "operator-organization":
      return <OrganizationPage id={route.id} />;
    case "operator-workers":
      return <WorkersPage />;
    case "operator-payments":
      return <PaymentsPage />;
    default:
      return <p class="loading">Loading…</p>;
  }
}
