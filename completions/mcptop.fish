# fish completion for mcptop(1). Installed as
# share/fish/vendor_completions.d/mcptop.fish. Theme names come from
# `mcptop tui --list-themes`, server names from `mcptop end [-c FILE | URL]
# --list-servers` with the -c FILE or URL already on the command line.

# No command word yet: the TUI's options apply, or a command may follow.
function __mcptop_no_command
    set -l tokens (commandline -opc)
    test (count $tokens) -eq 1
end

# The command word is $argv[1].
function __mcptop_using
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[2]" = "$argv[1]"
end

# The TUI: no command word, or `tui`.
function __mcptop_tui
    set -l tokens (commandline -opc)
    test (count $tokens) -eq 1; or not contains -- $tokens[2] check watch end audit login logout serve configs tap cancel replay report
end

function __mcptop_themes
    set -l tokens (commandline -opc)
    command -q -- $tokens[1]; or return
    $tokens[1] tui --list-themes 2>/dev/null
end

function __mcptop_views
    set -l tokens (commandline -opc)
    command -q -- $tokens[1]; or return
    $tokens[1] tui --list-views 2>/dev/null
end

# The configured server names, from the -c FILE or URL on the line.
function __mcptop_servers
    set -l tokens (commandline -opc)
    set -l fleet
    set -l i 2
    while test $i -le (count $tokens)
        switch $tokens[$i]
            case -c --config
                set i (math $i + 1)
                if test $i -le (count $tokens)
                    set -a fleet -c (string replace -r '^~' $HOME -- $tokens[$i])
                end
            case '--config=*'
                set -l file (string replace -- --config= '' $tokens[$i])
                set -a fleet -c (string replace -r '^~' $HOME -- $file)
            case 'http://*' 'https://*'
                set -a fleet $tokens[$i]
        end
        set i (math $i + 1)
    end
    command -q -- $tokens[1]; or return
    $tokens[1] end $fleet --list-servers 2>/dev/null
end

complete -c mcptop -f

# Commands
complete -c mcptop -n __mcptop_no_command -a tui -d 'The full-screen monitor (the default)'
complete -c mcptop -n __mcptop_no_command -a check -d 'Dial every server once, ping, report, exit'
complete -c mcptop -n __mcptop_no_command -a watch -d 'Monitor with no UI: JSON Lines on stdout'
complete -c mcptop -n __mcptop_no_command -a end -d 'Dial, end each session, report outcomes'
complete -c mcptop -n __mcptop_no_command -a audit -d 'Session-hygiene report per server (ends all it opens)'
complete -c mcptop -n __mcptop_no_command -a login -d 'Authorize mcptop for a server (OAuth)'
complete -c mcptop -n __mcptop_no_command -a serve -d 'Monitor with no UI, serve Prometheus /metrics'
complete -c mcptop -n __mcptop_no_command -a logout -d "Forget a server's cached tokens"
complete -c mcptop -n __mcptop_no_command -a configs -d 'Every server the sources give, dialing nothing'
complete -c mcptop -n __mcptop_no_command -a tap -d 'Stand in for a stdio server: relay, observe, publish'
complete -c mcptop -n __mcptop_no_command -a cancel -d "Cancel an agent's request through its tap"
complete -c mcptop -n __mcptop_no_command -a replay -d 'The TUI over a recording, no network'
complete -c mcptop -n __mcptop_no_command -a report -d 'The incident report of a recording'

# A recording: replay and report
function __mcptop_recording_cmd
    __mcptop_using replay; or __mcptop_using report
end

# Every command
complete -c mcptop -s c -l config -r -F -d 'The fleet config'
complete -c mcptop -l log -r -F -d 'Append a debug log of every exchange'
complete -c mcptop -s h -l help -d 'Print the help and exit'
complete -c mcptop -n 'not __mcptop_using login; and not __mcptop_using logout; and not __mcptop_recording_cmd' -l from -x -a 'claude claude-code cursor vscode windsurf zed gemini codex opencode goose continue cline roo lmstudio all' -d "An MCP client's configs"
complete -c mcptop -n 'not __mcptop_using login; and not __mcptop_using logout; and not __mcptop_recording_cmd; and not __mcptop_using tap' -l shard -x -d 'Only shard K of N (K/N)'
complete -c mcptop -n 'not __mcptop_using login; and not __mcptop_using logout; and not __mcptop_using tap; and not __mcptop_recording_cmd' -l taps -x -a '(__fish_complete_directories)' -d 'Every tap socket in DIR'
complete -c mcptop -n 'not __mcptop_using login; and not __mcptop_using logout; and not __mcptop_recording_cmd' -s v -l verbose -d 'List config keys read but not applied'
complete -c mcptop -n __mcptop_no_command -s V -l version -d 'Print the versions and exit'

# tui (and no command)
complete -c mcptop -n __mcptop_tui -l theme -r -F -a '(__mcptop_themes)' -d 'Colour theme'
complete -c mcptop -n __mcptop_tui -l list-themes -d 'Print the theme names and exit'
complete -c mcptop -n __mcptop_tui -l no-mouse -d 'Leave the mouse to the terminal'
complete -c mcptop -n __mcptop_tui -l group -x -a 'cause tag host transport none' -d 'Start with the rows grouped'
complete -c mcptop -n __mcptop_tui -l filter -x -d 'Start with this filter'
complete -c mcptop -n __mcptop_tui -l view -x -a '(__mcptop_views)' -d 'Start with a saved view'
complete -c mcptop -n __mcptop_tui -l list-views -d 'Print the saved views and exit'
complete -c mcptop -n __mcptop_tui -l sort -x -a 'name transport health liveness age streak session protocol tools rtt failure delivered http history' -d 'Start sorted by this column'

# --record: the TUI, watch, serve
complete -c mcptop -n '__mcptop_tui; or __mcptop_using watch; or __mcptop_using serve' -l record -r -F -d 'Record the event stream to FILE'
complete -c mcptop -n '__mcptop_tui; or __mcptop_using watch; or __mcptop_using serve' -l record-max -x -d 'Rotate the recording at MB'

# replay, report
complete -c mcptop -n __mcptop_recording_cmd -F -d 'Recording'
complete -c mcptop -n __mcptop_recording_cmd -l from -x -d 'Start at TIME (RFC 3339, HH:MM, +N[s|m|h])'
complete -c mcptop -n __mcptop_recording_cmd -l to -x -d 'End at TIME'
complete -c mcptop -n '__mcptop_using replay' -l speed -x -d 'Recorded seconds per second'
complete -c mcptop -n '__mcptop_using replay' -l theme -r -F -a '(__mcptop_themes)' -d 'Colour theme'
complete -c mcptop -n '__mcptop_using replay' -l no-mouse -d 'Leave the mouse to the terminal'
complete -c mcptop -n '__mcptop_using report' -l json -d 'JSON instead of Markdown'

# check
complete -c mcptop -n '__mcptop_using check' -l json -d 'One JSON object instead of a table'
complete -c mcptop -n '__mcptop_using check' -l timeout -x -d 'Request timeout and open deadline (ms)'
complete -c mcptop -n '__mcptop_using check' -l pings -x -d 'Ping every server R times, in rounds'
complete -c mcptop -n '__mcptop_using check' -l stats -d 'CPU, wall time and peak RSS per phase'

# configs
complete -c mcptop -n '__mcptop_using configs' -l json -d 'One JSON document instead of a table'

# end
complete -c mcptop -n '__mcptop_using end' -s s -l server -x -a '(__mcptop_servers)' -d 'End this server'
complete -c mcptop -n '__mcptop_using end' -l json -d 'One JSON object per line, one per ending'
complete -c mcptop -n '__mcptop_using end' -l teardown -x -d 'The teardown deadline (ms)'
complete -c mcptop -n '__mcptop_using end' -l session -x -d "End another client's session ID"
complete -c mcptop -n '__mcptop_using end' -l list-servers -d 'Print the configured server names and exit'

# audit
complete -c mcptop -n '__mcptop_using audit' -s s -l server -x -a '(__mcptop_servers)' -d 'Audit this server'
complete -c mcptop -n '__mcptop_using audit' -l json -d 'One JSON object instead of a table'
complete -c mcptop -n '__mcptop_using audit' -l parallel -x -d 'Audit N servers at once'
complete -c mcptop -n '__mcptop_using audit' -l timeout -x -d "Each check's bound (ms)"

# login NAME, logout NAME
complete -c mcptop -n '__mcptop_using login; or __mcptop_using logout' -a '(__mcptop_servers)' -d 'Server'
complete -c mcptop -n '__mcptop_using login; or __mcptop_using logout' -l wait -x -d 'How long to wait for the browser (ms)'

# serve
complete -c mcptop -n '__mcptop_using serve' -s l -l listen -x -d 'Where to listen (HOST:PORT)'
complete -c mcptop -n '__mcptop_using serve' -l label-from-tags -x -d 'Labels from tags (KEY,...)'
complete -c mcptop -n '__mcptop_using serve' -l bearer-token-file -r -F -d 'Require this bearer token'
complete -c mcptop -n '__mcptop_using serve' -l basic-auth-file -r -F -d 'Require this USER:PASSWORD'
complete -c mcptop -n '__mcptop_using serve' -l probe-urls -d 'Let /probe take an http(s) URL not in the config'

# tap -- CMD
complete -c mcptop -n '__mcptop_using tap' -l name -x -d "The server's name"
complete -c mcptop -n '__mcptop_using tap' -l socket -r -F -d 'Where to publish'
complete -c mcptop -n '__mcptop_using tap' -l teardown -x -d "The shutdown sequence's deadline (ms)"
complete -c mcptop -n '__mcptop_using tap' -l probe -d 'Ping the server when the agent is quiet'
complete -c mcptop -n '__mcptop_using tap' -l probe-interval -x -d 'How quiet, before a ping (ms)'
complete -c mcptop -n '__mcptop_using tap' -l no-socket -d 'Relay and read only'
complete -c mcptop -n '__mcptop_using tap' -l listen -x -d 'The HTTP form: where the agent connects (HOST:PORT)'
complete -c mcptop -n '__mcptop_using tap' -l upstream -x -d "The HTTP form: the server's URL"
complete -c mcptop -n '__mcptop_using tap' -l public -d 'Let --listen be a non-loopback address'

# cancel
complete -c mcptop -n '__mcptop_using cancel' -l server -x -a '(__mcptop_servers)' -d "The tap's server"
complete -c mcptop -n '__mcptop_using cancel' -l socket -r -F -d "The tap's socket"
complete -c mcptop -n '__mcptop_using cancel' -l request -x -d "The agent's request id"
complete -c mcptop -n '__mcptop_using cancel' -l reason -x -d 'Said to the server and the agent'
complete -c mcptop -n '__mcptop_using cancel' -l timeout -x -d 'How long to wait for the tap (ms)'
complete -c mcptop -n '__mcptop_using cancel' -l json -d "Print the tap's answer as JSON"
