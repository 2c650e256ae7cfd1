// One paged list of the dashboard's API (README.md of the API: `limit`, `cursor`, `nextCursor`): the first page when
// the page opens or its filter changes (an earlier request still on its way is dropped), then "Load more".
import { type StateUpdater, useEffect, useState } from "preact/hooks";
import { api, errorText, isAbort, query } from "./api";

/** A paged list's state, and how to load its next page. */
export interface PagedList<T> {
  items: T[];
  cursor: string | null;
  /** A page is on its way. */
  loading: boolean;
  /** The first page has come (or failed): the page is ready. */
  loaded: boolean;
  error: string | undefined;
  loadMore(): void;
  /** Changes the items shown (one created or revoked here) without loading them again. */
  setItems(update: StateUpdater<T[]>): void;
}

/**
 * Pages through `path` (50 items a page), whose answer holds the items under `field`. `filters` go in the query (empty
 * ones left out) and, when they change, start the list again. The caller decides when its page is ready
 * (`useReady(list.loaded)`, or later when it waits for more).
 */
export function usePagedList<T>(path: string, field: string, filters: Record<string, string | undefined> = {}): PagedList<T> {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string>();

  const page = async (after: string | null, signal?: AbortSignal) => {
    setLoading(true);
    try {
      const answer = await api<Record<string, unknown> & { nextCursor: string | null }>("GET", `${path}${query({ ...filters, limit: 50, cursor: after })}`, undefined, { signal });
      const received = answer[field] as T[];
      setItems((previous) => (after ? [...previous, ...received] : received));
      setCursor(answer.nextCursor);
      setError(undefined);
    } catch (failure) {
      if (isAbort(failure)) return;
      setError(errorText(failure));
    }
    setLoading(false);
    setLoaded(true);
  };

  const filterKey = JSON.stringify(filters);
  useEffect(() => {
    const controller = new AbortController();
    void page(null, controller.signal);
    return () => controller.abort();
  }, [path, filterKey]);

  return { items, cursor, loading, loaded, error, loadMore: () => void page(cursor), setItems };
}
