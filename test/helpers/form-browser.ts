/**
 * The browser of a person going through our server-rendered pages, over plain fetch: a cookie jar, form posts,
 * redirects followed by hand. For the OAuth authorize step (email, mailed code, consent) without a real browser.
 */
export interface PageResponse {
  status: number;
  location: string | null;
  headers: Headers;
  text: string;
}

export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  /** `stopAt`: a URL prefix (the client's redirect URI) where following redirects stops, since it leaves our site. */
  constructor(
    private readonly base: string,
    private readonly stopAt: string,
  ) {}

  async request(method: string, url: string, form?: Record<string, string> | URLSearchParams): Promise<PageResponse> {
    const target = url.startsWith('http') ? url : this.base + url;
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(target, { method, headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get('location'), headers: res.headers, text: await res.text() };
  }

  /** Follow redirects on our own site; stop at the first one that leaves it (the client's redirect URI). */
  async follow(url: string): Promise<PageResponse> {
    let res = await this.request('GET', url);
    while (res.status >= 300 && res.status < 400 && res.location && !res.location.startsWith(this.stopAt)) {
      res = await this.request('GET', res.location);
    }
    return res;
  }
}

/** The CSRF token of a page's form. */
export const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
