// Quita hosted checkout: copy button, countdown and live status.
// Everything it needs comes from data-* attributes of #checkout; it talks
// only to the page's own {id}/status endpoint.
(function () {
  'use strict';

  var root = document.getElementById('checkout');
  if (!root) return;

  var OPEN = { pending: true, processing: true };
  var status = root.getAttribute('data-status');
  var statusURL = root.getAttribute('data-status-url');
  var pollMs = Number(root.getAttribute('data-poll-ms')) || 3000;
  var expiresAt = Date.parse(root.getAttribute('data-expires-at'));
  // Count down on the server's clock, not the payer's.
  var skew = (Number(root.getAttribute('data-now')) || Date.now()) - Date.now();
  var lang = document.documentElement.lang || 'pt-BR';
  var announce = document.getElementById('announce');

  function now() { return Date.now() + skew; }

  // --- status -------------------------------------------------------------

  function show(next) {
    if (!next || next === status) return;
    var sections = root.querySelectorAll('[data-state]');
    var target = null;
    for (var i = 0; i < sections.length; i++) {
      if (sections[i].getAttribute('data-state') === next) target = sections[i];
    }
    if (!target) return; // a status this page does not know: keep what it shows
    var active = document.activeElement;
    var lostFocus = !active || active === document.body;
    for (i = 0; i < sections.length; i++) {
      var s = sections[i];
      if (s !== target && !s.hidden) {
        if (s.contains(active)) lostFocus = true;
        s.hidden = true;
      }
    }
    target.hidden = false;
    status = next;
    root.setAttribute('data-status', next);
    var title = target.getAttribute('data-title');
    if (title) document.title = title;
    var heading = target.querySelector('h2');
    if (heading) {
      announce.textContent = heading.textContent;
      if (lostFocus) heading.focus();
    }
    if (!OPEN[next]) {
      clearInterval(ticker);
      clearTimeout(pollTimer);
    }
  }

  var pollTimer = 0;
  var failures = 0;
  var inflight = false;

  function delay() {
    var base = status === 'processing' ? pollMs * 4 : pollMs;
    return Math.min(30000, base * Math.pow(2, Math.min(failures, 4)));
  }

  function schedule(ms) {
    clearTimeout(pollTimer);
    if (OPEN[status]) pollTimer = setTimeout(poll, ms);
  }

  function poll() {
    if (!OPEN[status] || inflight) return;
    if (document.hidden) return; // visibilitychange resumes
    inflight = true;
    fetch(statusURL, { cache: 'no-store', credentials: 'omit', headers: { Accept: 'application/json' } })
      .then(function (r) {
        if (!r.ok) throw new Error('status ' + r.status);
        return r.json();
      })
      .then(function (d) {
        failures = 0;
        var t = Date.parse(d.expires_at);
        if (!isNaN(t)) expiresAt = t;
        show(d.status);
      })
      .catch(function () { failures++; })
      .then(function () {
        inflight = false;
        schedule(delay());
      });
  }

  document.addEventListener('visibilitychange', function () {
    if (!document.hidden) poll();
  });

  // --- countdown ----------------------------------------------------------

  var box = document.getElementById('countdown-box');
  var counter = document.getElementById('countdown');
  var label = document.getElementById('countdown-label');
  var ticker = 0;

  function pad(n) { return n < 10 ? '0' + n : String(n); }

  function tick() {
    if (!counter) return;
    var left = Math.max(0, Math.floor((expiresAt - now()) / 1000));
    var h = Math.floor(left / 3600);
    var m = Math.floor(left / 60) % 60;
    var s = left % 60;
    counter.textContent = (h > 0 ? h + ':' + pad(m) : pad(m)) + ':' + pad(s);
    box.classList.toggle('urgent', left > 0 && left <= 300);
    if (left === 0) {
      box.classList.add('over');
      label.textContent = root.getAttribute('data-time-up');
      counter.hidden = true;
      clearInterval(ticker);
      // The server expires a due charge when it is read.
      schedule(0);
    }
  }

  // Show the deadline in the payer's own time zone.
  var deadline = document.getElementById('deadline');
  if (deadline && !isNaN(expiresAt) && window.Intl) {
    try {
      deadline.textContent = new Date(expiresAt).toLocaleTimeString(lang, { hour: '2-digit', minute: '2-digit' });
      var zone = document.getElementById('deadline-zone');
      if (zone) zone.hidden = true;
    } catch (e) { /* keep the server's Brasília time */ }
  }

  // --- copy ---------------------------------------------------------------

  var copy = document.getElementById('copy');
  var code = document.getElementById('brcode');
  var copyLabel = document.getElementById('copy-label');
  var feedback = document.getElementById('copy-feedback');
  var resetTimer = 0;

  function selectCode() {
    code.focus();
    code.select();
    code.setSelectionRange(0, code.value.length);
  }

  function legacyCopy() {
    selectCode();
    try { return document.execCommand('copy'); } catch (e) { return false; }
  }

  function copied(ok) {
    copy.classList.toggle('copied', ok);
    feedback.classList.toggle('fail', !ok);
    copyLabel.textContent = ok ? copy.getAttribute('data-copied') : copy.getAttribute('data-label');
    feedback.textContent = feedback.getAttribute(ok ? 'data-ok' : 'data-fail');
    if (!ok) selectCode();
    clearTimeout(resetTimer);
    resetTimer = setTimeout(function () {
      copy.classList.remove('copied');
      copyLabel.textContent = copy.getAttribute('data-label');
    }, 4000);
  }

  if (copy && code) {
    copy.addEventListener('click', function () {
      var text = code.value;
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () { copied(true); },
          function () { copied(legacyCopy()); }
        );
      } else {
        copied(legacyCopy());
      }
    });
    code.addEventListener('focus', function () { code.select(); });
  }

  // --- start --------------------------------------------------------------

  if (OPEN[status]) {
    if (status === 'pending' && counter) {
      tick();
      ticker = setInterval(tick, 1000);
    }
    schedule(pollMs);
  }
})();
