/**
 * The proven Istio range (program/istio-range.ts): what preview says of the mesh's istiod version,
 * and that the program reports it before anything is registered.
 */
import { expect } from "chai";
import { istioMinorOf, istioVersionMessages } from "../../program/istio-range";

describe("Istio versions: proven versus assumed", () => {
    it("reads the minor version of an istiod tag", () => {
        expect(["1.30.3", "1.30.3-distroless", "1.31-dev", "v1.24.0", "1.30"].map(istioMinorOf)).to.deep.equal(["1.30", "1.30", "1.31", "1.24", "1.30"]);
        expect(istioMinorOf("latest")).to.equal(undefined);
    });
    it("a proven release: nothing to say", () => {
        expect(istioVersionMessages(["1.30.3", "1.30.0"])).to.deep.equal({ warnings: [], notes: [] });
    });
    it("the 1.31 line: a note that only development builds are proven", () => {
        const m = istioVersionMessages(["1.31.0"]);
        expect(m.warnings).to.deep.equal([]);
        expect(m.notes[0]).to.include("Istio 1.31.0: proven only against development builds");
    });
    it("outside the range (1.24, an unreadable tag): a warning naming the range and the command", () => {
        const m = istioVersionMessages(["1.24.2", "latest"]);
        expect(m.warnings).to.have.length(2);
        expect(m.warnings[0]).to.match(/^Istio 1\.24\.2 is outside the proven range \(1\.30 .* and 1\.31 .*\).*npm run test:istio-versions/);
    });
});
