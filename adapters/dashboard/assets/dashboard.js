// Quita dashboard: progressive enhancement only. Every form and link works
// without this file; it adds copy buttons and a confirmation before
// destructive forms (data-confirm).
(function () {
  'use strict';
  document.addEventListener('click', function (ev) {
    var btn = ev.target.closest('[data-copy]');
    if (!btn) return;
    var field = document.getElementById(btn.getAttribute('data-copy'));
    if (!field) return;
    field.select();
    var done = function () {
      var label = btn.textContent;
      btn.textContent = btn.getAttribute('data-copied') || label;
      setTimeout(function () { btn.textContent = label; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, function () {});
    } else {
      done();
    }
  });
  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    var msg = form.getAttribute('data-confirm');
    if (msg && !window.confirm(msg)) {
      ev.preventDefault();
      return;
    }
    // One submit per click: a double click must not post twice.
    if (form.dataset.sent) {
      ev.preventDefault();
      return;
    }
    form.dataset.sent = '1';
  });
  // Leaving a page restored from the back/forward cache re-enables its forms.
  window.addEventListener('pageshow', function () {
    document.querySelectorAll('form[data-sent]').forEach(function (f) { delete f.dataset.sent; });
  });
})();
