// Package fs holds the model-facing file tools read, write and edit (and
// read_image) as registrations (package tools/toolreg), on top of the
// fsobserve provider and observation policy.
//
// # Composition
//
//	local, _ := fsobserve.NewLocal(fsobserve.WithCwd(root), fsobserve.WithDiffBasisMaxBytes(64))
//	tools, _ := fs.New(fs.Config{
//		FS:           local,
//		Observations: fsobserve.NewObservations(), // nil = bare deployment, unguarded
//		Policy:       resolver,                    // nil = non-confining, no fence
//		Escalate:     escalation.New(approver),    // nil = no approval service
//	})
//	for _, t := range tools {
//		registry.Register(t.Def) // read, write, edit (then read_image)
//	}
//
// # Read
//
// read resolves file_path against the session cwd, stats once (absent records
// absent and fails FS_NOT_FOUND), streams the file with bounded memory and
// returns the VERBATIM envelope
//
//	<path>D</path>\n<type>file</type>\n<content>\n<n>: <text>...\n\n<footer>\n</content>
//
// with the footers "(Output capped. ...)", "(Showing lines a-b of n. Use
// offset=b+1 to continue.)" or "(End of file - total n lines)". Meta is
// {path, offset, lines:[{number,text}], totalLines} plus lang for known
// extensions. Success records present{version of that stat}.
//
// # Write and edit
//
// write answers "Created file" / "Updated file" in the same envelope, meta
// {"diffs":[...]} ([] on create or when the old text is not diffable); edit
// answers "The file D has been updated successfully." (or "... updated. All
// occurrences were successfully replaced." with replace_all) and the diff
// meta. Diffs are jsdiff structuredPatch hunks with 3 context lines, each
// {path: raw file_path, oldText (null when empty), newText}.
//
// # Errors and remedies
//
// Failures are returned as errors; the pipeline renders "Error: <message>"
// and, for coded errors, {name, code}. FS_NOT_OBSERVED gets " — read the
// file, then retry" and FS_STALE_VERSION " — re-read the file, then retry"
// (see [Remedy]); the recorded upstream sessions carry these August texts, so
// the newer unified "cannot modify ... has not been read" text is not used.
//
// # Sandbox
//
// With a Policy resolver the file system confines: write and edit open the
// call through escalation.Opening with the operation rules (the
// sandbox_permissions + justification pairing in full, escalation.PlanOperation;
// a request for the standing mode goes through without approval; real
// widenings go to Escalate), resolve against the policy's workspace root,
// then fence the target (fsobserve.Local.Fence). A denial reads
//
//	[sandbox: file access denied under <mode> mode]
//	[sandbox: escalation available — retry this exact operation once ...]
//
// with code FS_SANDBOX_DENIED. For edit an unread file fails FS_NOT_OBSERVED
// before the fence; for write the fence runs before the existence check.
// Reads are never fenced.
//
// # Images
//
// With Config.Images, read_image is composed too (upstream registers it only
// while an attachment store is mounted). Its gates, in upstream's order and
// words, each a plain error: a blank path; an extension other than .png,
// .jpg, .jpeg, .webp, .gif (case-insensitive); no store; a media type the
// store does not accept; no resolvable model route; a route whose model
// does not declare image input (the text route). Then the path resolves as
// read's does (never fenced: an absent file is recorded absent and fails
// FS_NOT_FOUND), at most the store's byte limit is read (FS_TOO_LARGE), and
// the store admits the bytes (package attachment); a side over the limit,
// the pixel limit and bytes of another format than the extension declares
// are reworded for the model. Success records the version read (it
// authorises a later write, as read does) and answers
//
//	<path>D</path>\n<type>image</type>\n<content>\n<type> image, <w>x<h> px, <n> bytes\n</content>
//
// followed by an image block {attachmentId "sha256:<hex>", mediaType, bytes,
// width, height, name}; the value is {path, image}.
//
// # Imports
//
// The file tools import attachment, escalation, fsobserve, pipeline, sandbox and
// tools/toolreg (their registrations); they
// must not import stack (which composes them), the other tools or
// harness/... (test tooling).
package fs
