import Foundation

/// The browser: reads events from a terminal, runs them through the reducer, draws the state, and polls
/// the database for commits made elsewhere.
public final class BrowserApp {
    public let terminal: Terminal
    public let data: BrowserData
    public private(set) var state: AppState
    public let renderer: Renderer
    public let keyMap: KeyMap
    /// How often the database is checked for a newer version.
    public var pollMilliseconds = 250
    private var lastPoll = DispatchTime.now()

    public init(terminal: Terminal, data: BrowserData, theme: Theme = .dark, keyMap: KeyMap = .standard) {
        self.terminal = terminal
        self.data = data
        self.keyMap = keyMap
        renderer = Renderer(theme: theme, keyMap: keyMap)
        state = AppState.initial(size: terminal.size, data: data, format: renderer.format)
    }

    /// Runs until the user quits.
    public func run() {
        draw()
        while !state.shouldQuit && !terminal.isDisconnected {
            let event = terminal.nextEvent(timeoutMilliseconds: pollMilliseconds)
            var changed = false
            if let event {
                handle(event)
                changed = true
            }
            let now = DispatchTime.now()
            if event == nil || now.uptimeNanoseconds - lastPoll.uptimeNanoseconds >= UInt64(pollMilliseconds) * 1_000_000 {
                lastPoll = now
                changed = checkForChanges() || changed
            }
            if changed && !state.shouldQuit { draw() }
        }
    }

    /// Applies one event.
    public func handle(_ event: TerminalEvent) {
        switch event {
        case .key(let k): state.reduce(.key(k), data: data, keyMap: keyMap)
        case .resize(let s): state.reduce(.resize(s), data: data, keyMap: keyMap)
        }
    }

    /// Runs a command by name, as the `:` palette will.
    public func perform(_ command: Command) {
        state.reduce(.command(command), data: data, keyMap: keyMap)
    }

    /// Handles every queued event, then draws (tests type into a `VirtualTerminal` and call this).
    public func processPendingInput() {
        while !state.shouldQuit, let e = terminal.nextEvent(timeoutMilliseconds: 0) { handle(e) }
        if !state.shouldQuit { draw() }
    }

    /// Takes a newer version of the database if there is one; true when the state changed.
    @discardableResult
    public func checkForChanges() -> Bool {
        do {
            guard try data.refreshIfChanged() else { return false }
            state.reduce(.databaseChanged, data: data, keyMap: keyMap)
        } catch {
            state.message = StatusMessage("Reading the newest version failed: \(error)", isError: true)
        }
        return true
    }

    /// Draws the current state.
    public func draw() {
        if state.needsFullRedraw {
            terminal.invalidate()
            state.needsFullRedraw = false
        }
        if state.size != terminal.size { state.reduce(.resize(terminal.size), data: data, keyMap: keyMap); terminal.invalidate() }
        terminal.present(renderer.render(state, data: data))
    }
}
