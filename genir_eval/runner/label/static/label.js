// Keyboard labelling for genir-eval's labelling page: a choice's key saves it, s skips,
// u undoes, c writes a comment (Escape leaves it). Every action is one JSON request to the
// page's own API; the server then renders the next item.
(function () {
  "use strict";
  const main = document.getElementById("item");
  if (!main) { return; }
  const queue = main.dataset.queue;
  const item = main.dataset.item;
  const labeller = main.dataset.labeller;
  const reveal = main.dataset.reveal === "1";
  const status = document.getElementById("status");
  const comment = document.getElementById("comment");
  const started = performance.now();
  let busy = false;

  function say(text) { status.textContent = text; }

  async function send(path, body) {
    if (busy) { return; }
    busy = true;
    say("saving…");
    try {
      const reply = await fetch("/api/queues/" + encodeURIComponent(queue) + path, {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify(body),
        credentials: "same-origin",
      });
      if (!reply.ok) {
        const data = await reply.json().catch(() => ({error: reply.statusText}));
        say("not saved: " + (data.error || reply.status));
        busy = false;
        return;
      }
      window.location.reload();
    } catch (error) {
      say("not saved: " + error);
      busy = false;
    }
  }

  function label(value) {
    if (!item) { return; }
    send("/labels", {
      key: item, labeller: labeller, value: Number(value),
      comment: comment ? comment.value : "",
      seconds: Math.round((performance.now() - started)) / 1000,
      judge_shown: reveal,
    });
  }
  function skip() {
    if (item) { send("/skip", {key: item, labeller: labeller, comment: comment ? comment.value : ""}); }
  }
  function undo() { send("/undo", {labeller: labeller}); }

  const byKey = {};
  document.querySelectorAll("button.choice").forEach((button) => {
    byKey[button.dataset.key] = button.dataset.value;
    button.addEventListener("click", () => label(button.dataset.value));
  });
  const skipButton = document.getElementById("skip");
  if (skipButton) { skipButton.addEventListener("click", skip); }
  document.getElementById("undo").addEventListener("click", undo);

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.target === comment) {
      if (event.key === "Escape") { comment.blur(); }
      return;
    }
    if (Object.prototype.hasOwnProperty.call(byKey, event.key)) {
      event.preventDefault();
      label(byKey[event.key]);
    } else if (event.key === "s") {
      event.preventDefault();
      skip();
    } else if (event.key === "u") {
      event.preventDefault();
      undo();
    } else if (event.key === "c" && comment) {
      event.preventDefault();
      comment.focus();
    }
  });
})();
