// The URL `ssdlab serve` prints carries the token in its fragment (never sent to a server or kept in its logs):
// fill the form with it and send it once; the server answers with a cookie and the catalog.
"use strict";
(function () {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (!match) return;
  history.replaceState(null, "", window.location.pathname);
  document.getElementById("token").value = decodeURIComponent(match[1]);
  document.getElementById("login").submit();
})();
