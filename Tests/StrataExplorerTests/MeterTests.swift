@testable import StrataExplorer
import Testing

/// Issue 10, item 3: a meter of how full a level is, against its capacity.
@Suite struct MeterTests {
    @Test func meterShowsTheFullerOfBytesAndEntries() {
        var state = RendererTests.fixture()
        state.panes[1].bytes = 262_144  // half of 512 KiB
        state.panes[1].lastError = nil
        let text = Renderer(unicode: true).render(state, width: 120, height: 40).text
        #expect(text.contains("▕█████     ▏  50%"), "\(text)")
        #expect(text.contains("▕██████████▏ 100%"), "L1 holds 64 of 64 entries")
    }

    @Test func meterCountsEighths() {
        let renderer = Renderer(unicode: true)
        #expect(renderer.meter(0, width: 4) == "▕    ▏")
        #expect(renderer.meter(0.5, width: 4) == "▕██  ▏")
        #expect(renderer.meter(0.5625, width: 4) == "▕██▎ ▏", "2 cells and 2/8 of one (18 eighths of 32)")
        #expect(renderer.meter(2, width: 4) == "▕████▏", "over capacity stays within the bar")
        #expect(Renderer(unicode: false).meter(0.5, width: 4) == "[##  ]")
    }
}
