@main
struct BenchMain {
    static func main() { print("realm-bench: not yet") }
}
