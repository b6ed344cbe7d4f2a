// Search from disk. A page opened over file:// may not start a Web Worker, and the theme's search runs
// in one; on file:// this replaces Worker by one that runs the worker's script in a hidden iframe of the
// page: messages go in as "message" events on the iframe's window, and its postMessage comes back out.
// Its name tells the theme's offline plugin that a shim is here (it would add one from the network).
if (location.protocol === "file:") {
  window.Worker = class FrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.waiting = [];
      this.frame = document.createElement("iframe");
      this.frame.hidden = true;
      document.body.appendChild(this.frame);
      const scope = this.frame.contentWindow;
      scope.postMessage = (data) => {
        const event = new MessageEvent("message", { data });
        if (this.onmessage) this.onmessage(event);
        this.dispatchEvent(event);
      };
      scope.importScripts = () => {
        throw new Error("importScripts is not available to a worker run from disk");
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = () => {
        this.scope = scope;
        this.waiting.splice(0).forEach((data) => this.postMessage(data));
      };
      scope.document.head.appendChild(script);
    }

    postMessage(data) {
      if (this.scope) this.scope.dispatchEvent(new this.scope.MessageEvent("message", { data }));
      else this.waiting.push(data);
    }

    terminate() {
      this.frame.remove();
    }
  };
}
