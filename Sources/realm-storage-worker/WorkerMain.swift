@main
struct WorkerMain {
    static func main() { print("worker: not yet") }
}
