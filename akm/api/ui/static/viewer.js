// The ask page: stream POST /v1/answers (server-sent events over fetch) into the page.
// draft events: unverified text as it is generated; claim events: each verified claim;
// verdict: the complete answer object; error: a problem object. Text is only ever written
// with textContent, so nothing from a question, an answer or a source can become markup.
"use strict";

(function () {
  const form = document.getElementById("ask-form");
  if (!form) {
    return;
  }
  const byId = (id) => document.getElementById(id);
  const answer = byId("answer");
  const status = byId("answer-status");
  const failure = byId("answer-error");
  const draft = byId("draft");
  const draftText = byId("draft-text");
  const claimsSection = byId("claims-section");
  const claims = byId("claims");
  const verdictSection = byId("verdict-section");
  const verdict = byId("verdict");
  const reasons = byId("verdict-reasons");
  const packetLink = byId("packet-link");
  const button = byId("ask-button");

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function reset() {
    failure.hidden = true;
    failure.textContent = "";
    draft.hidden = true;
    draftText.textContent = "";
    claimsSection.hidden = true;
    claims.replaceChildren();
    verdictSection.hidden = true;
    verdict.textContent = "";
    reasons.replaceChildren();
  }

  function showError(message) {
    failure.textContent = message;
    failure.hidden = false;
    status.textContent = "The answer failed.";
  }

  function claimItem(claim) {
    const item = element("li", "claim-item");
    const state = String(claim.status || "unknown");
    item.dataset.status = state;
    item.append(element("span", "badge status-" + state.replace(/[^a-z-]/g, ""), state), " ");
    item.append(element("span", "claim-text", String(claim.text || "")));
    const score = typeof claim.supportScore === "number" ? claim.supportScore.toFixed(2) : "not recorded";
    const meta = ["support score " + score];
    for (const citation of claim.citations || []) {
      meta.push("E" + citation.evidenceNumber + ": " + citation.sourcePath + " (" + citation.locator +
        ", revision " + citation.revision + ")");
    }
    item.append(element("span", "claim-meta", meta.join("; ")));
    return item;
  }

  function onDraft(data) {
    draft.hidden = false;
    draftText.textContent += String(data.text || "");
    status.textContent = "Drafting the answer (unverified)…";
  }

  function onClaim(data) {
    // The verified claims take the draft's place.
    draft.hidden = true;
    claimsSection.hidden = false;
    claims.append(claimItem(data));
    status.textContent = "Checking the claims against the sources…";
  }

  function onVerdict(data) {
    draft.hidden = true;
    claims.replaceChildren(...(data.claims || []).map(claimItem));
    claimsSection.hidden = false;
    const outcome = (data.verdict && data.verdict.verdict) || "NOT_TESTED";
    verdict.textContent = outcome;
    verdict.className = "badge verdict-" + String(outcome).toLowerCase().replace(/[^a-z_]/g, "");
    for (const reason of (data.verdict && data.verdict.reasons) || []) {
      reasons.append(element("li", "", String(reason)));
    }
    const packetId = String(data.packetId || "");
    packetLink.href = "/ui/packets/" + encodeURIComponent(packetId).replace(/%3A/g, ":");
    packetLink.textContent = "Open the evidence packet " + packetId + " (claims, cited lines, revisions)";
    verdictSection.hidden = false;
    status.textContent = "Verdict: " + outcome + ".";
  }

  function onProblem(problem) {
    const title = problem && problem.title ? problem.title : "Error";
    const detail = problem && problem.detail ? ": " + problem.detail : "";
    showError(title + detail);
  }

  function dispatch(block) {
    let kind = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) {
        continue; // a keep-alive comment
      }
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) {
        value = value.slice(1);
      }
      if (name === "event") {
        kind = value;
      } else if (name === "data") {
        data.push(value);
      }
    }
    if (!data.length) {
      return;
    }
    const payload = JSON.parse(data.join("\n"));
    if (kind === "draft") {
      onDraft(payload);
    } else if (kind === "claim") {
      onClaim(payload);
    } else if (kind === "verdict") {
      onVerdict(payload);
    } else if (kind === "error") {
      onProblem(payload);
    }
  }

  async function ask(question) {
    const response = await fetch(form.dataset.endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question: question, stream: true }),
    });
    if (!response.ok || !response.body) {
      let problem = null;
      try {
        problem = await response.json();
      } catch (ignored) {
        problem = { title: "HTTP " + response.status };
      }
      onProblem(problem);
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      buffer = buffer.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
      if (done) {
        break;
      }
    }
    if (buffer.trim()) {
      dispatch(buffer);
    }
    if (verdictSection.hidden && failure.hidden) {
      showError("The stream ended before the verdict; nothing was verified.");
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const question = byId("question").value.trim();
    if (!question) {
      return;
    }
    reset();
    button.disabled = true;
    answer.setAttribute("aria-busy", "true");
    status.textContent = "Retrieving evidence…";
    try {
      await ask(question);
    } catch (error) {
      showError("The connection failed: " + error);
    } finally {
      button.disabled = false;
      answer.setAttribute("aria-busy", "false");
    }
  });
})();
