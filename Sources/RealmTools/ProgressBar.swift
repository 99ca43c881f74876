import Foundation

/// A progress bar with rate and ETA on standard error, drawn only when it is a terminal.
public final class ProgressBar {
    let label: String
    let enabled: Bool
    let start = Date()
    var lastDraw = Date.distantPast

    public init(_ label: String, enabled: Bool = isatty(2) != 0) {
        self.label = label
        self.enabled = enabled
    }

    /// Call as work progresses; redraws at most ten times a second.
    public func update(_ done: Int, _ total: Int) {
        guard enabled else { return }
        let now = Date()
        guard done >= total || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        let elapsed = max(now.timeIntervalSince(start), 0.001)
        let rate = Double(done) / elapsed
        let fraction = total > 0 ? min(Double(done) / Double(total), 1) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let eta = rate > 0 && total > done ? ProgressBar.clock(Double(total - done) / rate) : "0:00"
        let line = String(format: "\r%@ %@ %3d%%  %@/s  ETA %@ ", label, bar, Int(fraction * 100),
                          ProgressBar.count(rate), eta)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Clears the line.
    public func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }

    static func count(_ rate: Double) -> String {
        rate >= 1_000_000 ? String(format: "%.1fM", rate / 1_000_000) : rate >= 1000 ? String(format: "%.1fk", rate / 1000) : String(format: "%.0f", rate)
    }
}
