// Image URLs read into sources (data: URLs with base64 image data, http and https URLs; everything else refused with
// a reason), and the offsets ContentBuilder gives images among text parts.
import { describe, expect, it } from "vitest";
import { ContentBuilder, IMAGE_URL_RULE, imageSourceOfUrl } from "./source.js";

describe("imageSourceOfUrl", () => {
  it("reads a base64 data: URL of an image type, parameters and case aside, and http(s) URLs", () => {
    expect(imageSourceOfUrl("data:image/png;base64,iVBORw0KGgo=")).toEqual({ type: "base64", data: "iVBORw0KGgo=", mediaType: "image/png" });
    expect(imageSourceOfUrl("DATA:Image/JPEG;name=a.jpg;BASE64,/9j/")).toEqual({ type: "base64", data: "/9j/", mediaType: "image/jpeg" });
    expect(imageSourceOfUrl("data:image/svg+xml;base64,PHN2Zz4=")).toEqual({ type: "base64", data: "PHN2Zz4=", mediaType: "image/svg+xml" });
    expect(imageSourceOfUrl("https://example.com/a.png?x=1")).toEqual({ type: "url", url: "https://example.com/a.png?x=1" });
    expect(imageSourceOfUrl("http://example.com/a")).toEqual({ type: "url", url: "http://example.com/a" });
  });

  it("refuses other data: URLs and other schemes, saying what it takes", () => {
    expect(imageSourceOfUrl("data:text/plain;base64,aGk=")).toEqual({ refused: 'a data: URL of an image type (image/jpeg, image/png, image/gif, image/webp), not "text/plain"' });
    expect(imageSourceOfUrl("data:;base64,aGk=")).toEqual({ refused: 'a data: URL of an image type (image/jpeg, image/png, image/gif, image/webp), not "(none)"' });
    expect(imageSourceOfUrl("data:image/png,%89PNG")).toEqual({ refused: "a base64 data: URL (data:image/png;base64,<data>)" });
    expect(imageSourceOfUrl("data:image/png;base64")).toEqual({ refused: "a data: URL of the form data:image/png;base64,<data>" });
    for (const url of ["file:///etc/passwd", "ftp://example.com/a.png", "example.com/a.png", "", "gopher://x"]) {
      expect(imageSourceOfUrl(url)).toEqual({ refused: IMAGE_URL_RULE });
    }
  });
});

describe("ContentBuilder", () => {
  const source = { type: "url" as const, url: "https://example.com/a.png" };

  it("puts each image at the length of the text before it, before the separator of the text after it", () => {
    const built = new ContentBuilder("\n\n", true);
    built.image(source, "p0");
    built.text("ab");
    built.image(source, "p2");
    built.text("");
    built.image(source, "p4");
    built.text("cde");
    built.image(source, "p6");
    expect(built.content).toBe("ab\n\ncde");
    expect(built.images.map((image) => [image.path, image.offset])).toEqual([["p0", 0], ["p2", 2], ["p4", 2], ["p6", 7]]);
    const message = { role: "user" as const, content: built.content };
    expect(built.pendingOf(message)[1]).toEqual({ message, offset: 2, source, path: "p2" });
  });

  it("keeps empty texts where they count (OpenAI parts join every text)", () => {
    const built = new ContentBuilder("\n", false);
    built.text("");
    built.image(source, "p1");
    built.text("x");
    expect([built.content, built.images[0]!.offset, built.empty]).toEqual(["\nx", 0, false]);
    expect(new ContentBuilder("\n", true).empty).toBe(true);
  });
});
