// Quita hosted checkout: method switcher, copy buttons, countdown and
// live status; and the sandbox card screen. Everything it needs comes from
// data-* attributes; it talks only to the page's own {id}/status endpoint
// (and, on the card screen, to {id}/card).
(function () {
  'use strict';

  var root = document.getElementById('checkout');
  if (!root) return;
  var methodsPending = root.getAttribute('data-methods-pending') === 'true';

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
        // The acquirer finished the boleto/Multibanco/crypto data: load
        // it (the chosen method survives in the address's #fragment).
        if (methodsPending && d.methods_ready && d.status === 'pending') {
          methodsPending = false;
          location.reload();
          return;
        }
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
      timeUp();
      // Ask at once, then keep asking: a Pix paid just before the deadline
      // may still be confirmed (the page turns to paid), and the server
      // expires the charge only once it is sure no such payment is coming.
      schedule(0);
    }
  }

  // Past the deadline nothing can be paid: hide the ways to pay and say
  // that a payment made in time is being confirmed. The charge stays
  // pending on the server meanwhile, so this is not the expired state.
  function timeUp() {
    var section = root.querySelector('section[data-state="pending"]');
    var note = document.getElementById('time-up-note');
    if (!section || section.classList.contains('time-up')) return;
    section.classList.add('time-up');
    if (note) {
      note.hidden = false;
      if (!section.hidden) announce.textContent = note.textContent;
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

  // --- method switcher ----------------------------------------------------

  var radios = root.querySelectorAll('input[name="method"]');

  function choose(kind, remember) {
    var panels = root.querySelectorAll('.panel[data-method], [data-for]');
    for (var i = 0; i < panels.length; i++) {
      var p = panels[i];
      var k = p.getAttribute('data-method') || p.getAttribute('data-for');
      p.hidden = k !== kind;
    }
    if (remember && history.replaceState) history.replaceState(null, '', '#' + kind);
  }

  if (radios.length > 1) {
    var initial = location.hash.slice(1);
    var picked = null;
    for (var r = 0; r < radios.length; r++) {
      if (radios[r].value === initial) picked = radios[r];
      radios[r].addEventListener('change', function (e) {
        if (e.target.checked) choose(e.target.value, true);
      });
    }
    if (picked) picked.checked = true;
    for (r = 0; r < radios.length; r++) {
      if (radios[r].checked) choose(radios[r].value, false);
    }
  }

  // --- copy ---------------------------------------------------------------

  function wireCopy(btn) {
    var code = document.getElementById(btn.getAttribute('data-target'));
    var label = btn.querySelector('.copy-label');
    var feedback = document.getElementById(btn.getAttribute('data-feedback'));
    var resetTimer = 0;
    if (!code || !label || !feedback) return;

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
      btn.classList.toggle('copied', ok);
      feedback.classList.toggle('fail', !ok);
      label.textContent = ok ? btn.getAttribute('data-copied') : btn.getAttribute('data-label');
      feedback.textContent = feedback.getAttribute(ok ? 'data-ok' : 'data-fail');
      if (!ok) selectCode();
      clearTimeout(resetTimer);
      resetTimer = setTimeout(function () {
        btn.classList.remove('copied');
        label.textContent = btn.getAttribute('data-label');
      }, 4000);
    }

    btn.addEventListener('click', function () {
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

  var copyButtons = root.querySelectorAll('.copy-btn');
  for (var c = 0; c < copyButtons.length; c++) wireCopy(copyButtons[c]);

  // --- start --------------------------------------------------------------

  if (OPEN[status]) {
    if (status === 'pending' && counter) {
      tick();
      ticker = setInterval(tick, 1000);
    }
    schedule(pollMs);
  }
})();

// The sandbox card screen: approve or decline, then back to the checkout.
(function () {
  'use strict';

  var screen = document.getElementById('card-screen');
  if (!screen) return;
  var feedback = document.getElementById('card-feedback');
  var buttons = screen.querySelectorAll('button[data-decision]');
  var busy = false;

  function decide(decision) {
    if (busy) return;
    busy = true;
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
    fetch('card', {
      method: 'POST',
      cache: 'no-store',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ decision: decision })
    }).then(function (r) {
      if (r.status === 409) throw new Error('closed');
      if (!r.ok) throw new Error('status ' + r.status);
      location.href = screen.getAttribute('data-back');
    }).catch(function (e) {
      busy = false;
      for (var i = 0; i < buttons.length; i++) buttons[i].disabled = false;
      feedback.textContent = screen.getAttribute(e.message === 'closed' ? 'data-closed' : 'data-fail');
    });
  }

  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener('click', function (e) {
      decide(e.currentTarget.getAttribute('data-decision'));
    });
  }
})();
