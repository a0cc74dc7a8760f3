;;; eglot_driver.el --- drives a batch Emacs + eglot for tests/e2e/editors/test_eglot.py  -*- lexical-binding: t -*-

;; Run as `emacs --batch -Q -l <init.el> -l eglot_driver.el', where init.el is the eglot snippet
;; of docs/editors.md, verbatim.  The plan (a JSON file named by $LSPMUX_EDITOR_PLAN) says which
;; file to open, what to do, and where to write what the editor shows: the flymake diagnostics of
;; the buffer, the code actions offered, the buffer text.  The pytest test judges; this script
;; only observes.  Every wait is a poll (accept-process-output) with a deadline; a wait that
;; times out is recorded, not fatal.  Batch Emacs runs no idle timers and no command loop, so
;; the driver does what they would: it starts flymake, flushes eglot's pending didChange after an
;; edit, and reads input events (file-notify's) while it waits.

(require 'cl-lib)
(require 'json)
(require 'subr-x)

;; Emacs >= 29 has eglot built in; before that, Debian's elpa-eglot lives in the system elpa
;; folder, which -Q leaves out.
(unless (require 'eglot nil t)
  (require 'package)
  (setq package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
  (package-initialize)
  (require 'eglot))
(require 'flymake)

(defvar drv-plan
  (let ((json-object-type 'alist) (json-array-type 'list) (json-key-type 'symbol))
    (json-read-file (getenv "LSPMUX_EDITOR_PLAN"))))
(defun drv-get (key) (alist-get key drv-plan))

(defvar drv-out (make-hash-table :test 'equal))
(defvar drv-t0 (float-time))
(defvar drv-trace-lines nil)
(defvar drv-timeouts nil)
(defvar drv-timeline nil)
(defvar drv-last-key nil)
(defvar drv-last-change (float-time))
(defvar drv-buffer nil)

(defun drv-put (key value) (puthash key value drv-out))
(defun drv-ms () (* 1000 (- (float-time) drv-t0)))
(defun drv-trace (what) (push (format "%8.0f ms  %s" (drv-ms) what) drv-trace-lines))

(defun drv-diag-lsp (d)
  "The LSP diagnostic eglot made the flymake diagnostic D from."
  (let ((data (if (fboundp 'flymake-diagnostic-data)
                  (flymake-diagnostic-data d)
                (eglot--diag-data d))))
    (cdr (assoc 'eglot-lsp-diag data))))

(defun drv-snapshot ()
  "Every flymake diagnostic of the buffer, with the LSP fields it came from."
  (if (not (buffer-live-p drv-buffer))
      []
    (with-current-buffer drv-buffer
      (let ((diags
             (mapcar
              (lambda (d)
                (let* ((lsp (drv-diag-lsp d))
                       (range (plist-get lsp :range))
                       (start (plist-get range :start))
                       (end (plist-get range :end))
                       (obj (make-hash-table :test 'equal)))
                  (puthash "namespace" (format "%s" (flymake-diagnostic-backend d)) obj)
                  (puthash "source" (plist-get lsp :source) obj)
                  (puthash "code" (let ((c (plist-get lsp :code))) (and c (format "%s" c))) obj)
                  (puthash "message" (or (plist-get lsp :message) (flymake-diagnostic-text d)) obj)
                  (puthash "severity" (plist-get lsp :severity) obj)
                  (puthash "lnum" (or (plist-get start :line) -1) obj)
                  (puthash "col" (or (plist-get start :character) -1) obj)
                  (puthash "end_lnum" (or (plist-get end :line) -1) obj)
                  (puthash "end_col" (or (plist-get end :character) -1) obj)
                  obj))
              (flymake-diagnostics))))
        (vconcat (sort diags (lambda (a b) (string< (json-encode a) (json-encode b)))))))))

(defun drv-observe ()
  "Record the diagnostics shown when they differ from the last ones recorded."
  (let* ((diags (drv-snapshot)) (key (json-encode diags)))
    (unless (equal key drv-last-key)
      (setq drv-last-key key drv-last-change (float-time))
      (let ((entry (make-hash-table :test 'equal)))
        (puthash "t_ms" (drv-ms) entry)
        (puthash "wall" (float-time) entry)
        (puthash "diagnostics" diags entry)
        (push entry drv-timeline)))
    diags))

(defun drv-wait (what seconds pred)
  "Poll PRED every 20 ms until it is non-nil or SECONDS pass; record a timeout under WHAT."
  (let ((deadline (+ (float-time) seconds)) ok)
    (while (and (progn (drv-observe) (not (setq ok (funcall pred))))
                (< (float-time) deadline))
      (accept-process-output nil 0.02)
      ;; File-notify events arrive as input events, which only reading input handles.
      (ignore-errors (read-event nil nil 0.001)))
    (drv-trace (concat (if ok "seen: " "TIMEOUT: ") what))
    (unless ok (push what drv-timeouts))
    ok))

(defun drv-has-source (diags source)
  (cl-some (lambda (d) (and (stringp (gethash "source" d))
                            (string= (downcase (gethash "source" d)) (downcase source))))
           diags))

(defun drv-settle (what)
  (drv-wait (format "%s: a diagnostic from each of %s" what (string-join (drv-get 'sources) ", "))
            (drv-get 'deadline)
            (lambda () (let ((diags (drv-snapshot)))
                         (cl-every (lambda (s) (drv-has-source diags s)) (drv-get 'sources)))))
  (drv-wait (format "%s: no change for %s s" what (drv-get 'quiet)) (drv-get 'deadline)
            (lambda () (>= (- (float-time) drv-last-change) (drv-get 'quiet))))
  (drv-snapshot))

(defun drv-text () (with-current-buffer drv-buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun drv-apply-edits ()
  "Apply the plan's edits (0-based, end-exclusive line ranges), in order, unsaved."
  (with-current-buffer drv-buffer
    (dolist (e (drv-get 'edits))
      (save-excursion
        (goto-char (point-min))
        (forward-line (alist-get 'start e))
        (let ((beg (point)))
          (forward-line (- (alist-get 'end e) (alist-get 'start e)))
          (delete-region beg (point))
          (dolist (line (alist-get 'lines e)) (insert line "\n")))))
    ;; What eglot's idle timer would do: send the pending didChange.
    (eglot--signal-textDocument/didChange)))

(defun drv-scenario-diagnostics ()
  (drv-put "diagnostics" (drv-settle "initial diagnostics")))

(defun drv-scenario-stale ()
  (drv-put "before" (drv-settle "initial diagnostics"))
  (drv-apply-edits)
  (let ((edited-ms (drv-ms)))
    (drv-put "edited_ms" edited-ms)
    (drv-put "edited_wall" (float-time))
    (drv-trace "edited (unsaved)")
    (when (drv-wait
           "diagnostics of the edited text only" (drv-get 'deadline)
           (lambda ()
             (let ((diags (append (drv-snapshot) nil)))
               (and (cl-notany (lambda (d) (cl-some (lambda (s) (string-search s (gethash "message" d)))
                                                    (drv-get 'stale)))
                               diags)
                    (cl-every (lambda (want)
                                (cl-some (lambda (d)
                                           (and (stringp (gethash "source" d))
                                                (string= (downcase (gethash "source" d)) (downcase (car want)))
                                                (string-search (cadr want) (gethash "message" d))))
                                         diags))
                              (drv-get 'expect_after))))))
      (drv-put "clean_ms" (- (drv-ms) edited-ms))
      (drv-put "clean_wall" (float-time))))
  (drv-wait (format "no change for %s s after the edit" (drv-get 'quiet)) (drv-get 'deadline)
            (lambda () (>= (- (float-time) drv-last-change) (drv-get 'quiet))))
  (drv-put "after" (drv-snapshot))
  (drv-put "text" (drv-text)))

(defun drv-scenario-watch ()
  (drv-put "before" (drv-settle "initial diagnostics"))
  ;; Another program (git, an agent) rewrites a configuration file on disk.
  (with-temp-file (drv-get 'disk_file) (insert (drv-get 'disk_text)))
  (let ((written-ms (drv-ms)) (gone (drv-get 'gone)))
    (drv-trace (concat "wrote " (drv-get 'disk_file)))
    (when (drv-wait
           (format "%s %s gone after the disk change" (car gone) (cadr gone)) (drv-get 'deadline)
           (lambda ()
             (cl-notany (lambda (d) (and (stringp (gethash "source" d))
                                         (string= (downcase (gethash "source" d)) (downcase (car gone)))
                                         (equal (gethash "code" d) (cadr gone))))
                        (drv-snapshot))))
      (drv-put "gone_ms" (- (drv-ms) written-ms))))
  (drv-put "after" (drv-snapshot)))

(defun drv-jump (line)
  "Go to the definition of the plan's name on LINE as `M-.' does (eglot's xref backend), asked
again while the server answers nothing; record where point lands."
  (let ((deadline (+ (float-time) (drv-get 'deadline))) xrefs)
    (while (and (null xrefs) (< (float-time) deadline))
      (goto-char (point-min))
      (forward-line line)
      (search-forward (drv-get 'name) (line-end-position))
      (backward-char 1)
      (setq xrefs (ignore-errors
                    (xref-backend-definitions 'eglot (xref-backend-identifier-at-point 'eglot))))
      (unless xrefs (accept-process-output nil 0.5)))
    (if (null xrefs)
        (drv-trace "TIMEOUT: no definition")
      (let ((marker (xref-location-marker (xref-item-location (car xrefs)))))
        (goto-char marker)
        (drv-trace (format "jumped to %d:%d" (1- (line-number-at-pos)) (current-column)))))
    (let ((obj (make-hash-table :test 'equal)))
      (puthash "line" (1- (line-number-at-pos)) obj)
      (puthash "before" (buffer-substring-no-properties (line-beginning-position) (point)) obj)
      (puthash "word" (or (thing-at-point 'symbol t) "") obj)
      obj)))

(defun drv-scenario-definition ()
  (with-current-buffer drv-buffer
    (let ((first (drv-jump (drv-get 'usage_line))))
      ;; Edits with non-BMP text before the names, on both lines.
      (dolist (e (drv-get 'inserts)) ; (line, after this text, insert this)
        (goto-char (point-min))
        (forward-line (nth 0 e))
        (search-forward (nth 1 e) (line-end-position))
        (insert (nth 2 e)))
      (eglot--signal-textDocument/didChange)
      (drv-trace "edited (unsaved)")
      (drv-put "jumps" (vector first (drv-jump (drv-get 'usage_line))))
      (drv-put "text" (drv-text)))))

(defun drv-scenario-code_action ()
  (drv-put "before" (drv-settle "initial diagnostics"))
  (let* ((before (drv-text))
         (cursor (drv-get 'cursor))
         (menu nil)
         (server (with-current-buffer drv-buffer (eglot-current-server)))
         actions matching)
    (with-current-buffer drv-buffer
      (goto-char (point-min))
      (forward-line (car cursor))
      (forward-char (cadr cursor))
      ;; A menu opened instead of applying: record it, pick nothing.
      (advice-add 'completing-read :override
                  (lambda (_prompt collection &rest _)
                    (setq menu (mapcar (lambda (c) (if (consp c) (car c) c)) collection))
                    nil))
      ;; As `M-x eglot-code-actions' with point on the name: the bounds of the thing at point.
      (let ((bounds (bounds-of-thing-at-point 'sexp)))
        (setq actions (eglot-code-actions (car bounds) (cdr bounds) nil nil)))
      (drv-trace "code actions answered")
      (setq matching (cl-remove-if-not
                      (lambda (a) (string-search (drv-get 'action_title) (plist-get a :title)))
                      actions))
      (drv-put "offered" (vconcat (mapcar (lambda (a) (plist-get a :title)) actions)))
      (drv-put "matching" (vconcat (mapcar (lambda (a) (plist-get a :title)) matching)))
      (when (= (length matching) 1)
        (let ((action (car matching)))
          ;; What a user's `M-x eglot-code-action-quickfix' ends in.
          (if (fboundp 'eglot-execute)
              (eglot-execute server action)
            (eglot--read-execute-code-action (list action) server (plist-get action :kind)))))
      (drv-put "menu" (if menu (vconcat menu) nil)))
    (drv-wait "the chosen action changed the buffer" (drv-get 'apply_deadline)
              (lambda () (not (string= (drv-text) before))))
    (drv-put "text" (drv-text))))

(defun drv-start ()
  (drv-put "emacs_version" emacs-version)
  (drv-put "eglot_library" (locate-library "eglot"))
  (setq drv-buffer (find-file-noselect (drv-get 'file)))
  (with-current-buffer drv-buffer
    (drv-put "major_mode" (symbol-name major-mode))
    (apply #'eglot (eglot--guess-contact)))
  (drv-wait "eglot managing the buffer" (drv-get 'deadline)
            (lambda () (buffer-local-value 'eglot--managed-mode drv-buffer)))
  (with-current-buffer drv-buffer
    ;; What flymake does when the buffer is first displayed: start its backends (eglot's).
    (flymake-mode 1)
    (flymake-start)))

(defun drv-finish ()
  (drv-put "trace" (vconcat (reverse drv-trace-lines)))
  (drv-put "timeouts" (vconcat (reverse drv-timeouts)))
  (drv-put "timeline" (vconcat (reverse drv-timeline)))
  (let ((server (and (buffer-live-p drv-buffer)
                     (with-current-buffer drv-buffer (eglot-current-server)))))
    (when server
      (let ((events (jsonrpc-events-buffer server)) (log (drv-get 'events_log)))
        (when (and log (buffer-live-p events))
          (with-current-buffer events (write-region (point-min) (point-max) log nil 'silent))))
      (ignore-errors (eglot-shutdown server))))
  (with-temp-file (drv-get 'out) (insert (json-encode drv-out))))

(condition-case err
    (progn
      (drv-start)
      (funcall (intern (concat "drv-scenario-" (drv-get 'scenario)))))
  (error (drv-put "error" (format "%S" err))))
(drv-finish)
(kill-emacs 0)
