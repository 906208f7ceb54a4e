// Package attachment is the local attachment store of images (upstream's
// attachment-local): content-addressed, owner-private objects under
// <DSH_HOME>/attachments/v1, each admitted only after a full decode.
//
// # Admission of one image
//
// In order, each failure an [*Error] with upstream's code and text:
//
//  1. more than Limits.MaxImageBytes encoded bytes: IMAGE_TOO_LARGE;
//  2. empty: INVALID_IMAGE "Image is empty.";
//  3. the header (the format from the magic bytes, PNG, JPEG, GIF or WebP,
//     and the intrinsic width and height; a GIF's logical screen) is
//     read: anything else is INVALID_IMAGE "Unsupported or malformed
//     image data.";
//  4. width x height above Limits.MaxImagePixels: IMAGE_TOO_MANY_PIXELS;
//     then a side above Limits.MaxImageDimension: IMAGE_DIMENSION_TOO_LARGE
//     (upstream checks the pixel count first);
//  5. the whole raster is decoded (Go's image/png, image/jpeg, image/gif
//     and golang.org/x/image/webp where upstream uses libvips): a
//     truncated or corrupt raster is INVALID_IMAGE;
//  6. the detected type differs from the declared one: IMAGE_TYPE_MISMATCH.
//
// A batch ([Store.SaveAll], an inline prompt's images) checks the count
// (TOO_MANY_IMAGES), the aggregate bytes (IMAGES_TOO_LARGE) and each media
// type (UNSUPPORTED_IMAGE_TYPE), then validates every member before
// writing any.
//
// # Storage
//
// The object of bytes b is objects/<sha[:2]>/<sha> with sha the SHA-256 of
// b, directories 0700, the file 0600, published by link(2) from a private
// staging file (an existing object with the same digest is verified, not
// replaced) and fsynced with its directory entries. The reference is
// {attachmentId: "sha256:<sha>", mediaType, width, height, bytes, name?};
// the name is the display name's last path segment without control
// characters, trimmed, at most 255 characters.
//
// # Wire admission
//
// [DecodeBase64] accepts only canonical base64 (what Node's
// Buffer.from(data, "base64").toString("base64") gives back unchanged):
// no whitespace, no missing padding, no stray bits.
//
// # Imports
//
// The standard library, golang.org/x/image/webp and golang.org/x/sys/unix
// (a directory fsync) only; never pipeline,
// stack or harness (its errors satisfy pipeline's coded-error interface by
// shape).
package attachment
