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
    test (count $tokens) -eq 1; or not contains -- $tokens[2] check watch end login logout serve
end

function __mcptop_themes
    set -l tokens (commandline -opc)
    command -q -- $tokens[1]; or return
    $tokens[1] tui --list-themes 2>/dev/null
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
complete -c mcptop -n __mcptop_no_command -a login -d 'Authorize mcptop for a server (OAuth)'
complete -c mcptop -n __mcptop_no_command -a serve -d 'Monitor with no UI, serve Prometheus /metrics'
complete -c mcptop -n __mcptop_no_command -a logout -d "Forget a server's cached tokens"

# Every command
complete -c mcptop -s c -l config -r -F -d 'The fleet config'
complete -c mcptop -l log -r -F -d 'Append a debug log of every exchange'
complete -c mcptop -s h -l help -d 'Print the help and exit'
complete -c mcptop -n 'not __mcptop_using login; and not __mcptop_using logout' -l from -x -a 'claude claude-code cursor vscode windsurf zed all' -d "An MCP client's configs"
complete -c mcptop -n 'not __mcptop_using login; and not __mcptop_using logout' -l shard -x -d 'Only shard K of N (K/N)'
complete -c mcptop -n 'not __mcptop_using login; and not __mcptop_using logout' -s v -l verbose -d 'List config keys read but not applied'
complete -c mcptop -n __mcptop_no_command -s V -l version -d 'Print the versions and exit'

# tui (and no command)
complete -c mcptop -n __mcptop_tui -l theme -r -F -a '(__mcptop_themes)' -d 'Colour theme'
complete -c mcptop -n __mcptop_tui -l list-themes -d 'Print the theme names and exit'
complete -c mcptop -n __mcptop_tui -l no-mouse -d 'Leave the mouse to the terminal'

# check
complete -c mcptop -n '__mcptop_using check' -l json -d 'One JSON object instead of a table'
complete -c mcptop -n '__mcptop_using check' -l timeout -x -d 'Request timeout and open deadline (ms)'
complete -c mcptop -n '__mcptop_using check' -l pings -x -d 'Ping every server R times, in rounds'
complete -c mcptop -n '__mcptop_using check' -l stats -d 'CPU, wall time and peak RSS per phase'

# end
complete -c mcptop -n '__mcptop_using end' -s s -l server -x -a '(__mcptop_servers)' -d 'End this server'
complete -c mcptop -n '__mcptop_using end' -l json -d 'One JSON object per line, one per ending'
complete -c mcptop -n '__mcptop_using end' -l teardown -x -d 'The teardown deadline (ms)'
complete -c mcptop -n '__mcptop_using end' -l session -x -d "End another client's session ID"
complete -c mcptop -n '__mcptop_using end' -l list-servers -d 'Print the configured server names and exit'

# login NAME, logout NAME
complete -c mcptop -n '__mcptop_using login; or __mcptop_using logout' -a '(__mcptop_servers)' -d 'Server'
complete -c mcptop -n '__mcptop_using login; or __mcptop_using logout' -l wait -x -d 'How long to wait for the browser (ms)'

# serve
complete -c mcptop -n '__mcptop_using serve' -s l -l listen -x -d 'Where to listen (HOST:PORT)'
complete -c mcptop -n '__mcptop_using serve' -l label-from-tags -x -d 'Labels from tags (KEY,...)'
complete -c mcptop -n '__mcptop_using serve' -l bearer-token-file -r -F -d 'Require this bearer token'
complete -c mcptop -n '__mcptop_using serve' -l basic-auth-file -r -F -d 'Require this USER:PASSWORD'
complete -c mcptop -n '__mcptop_using serve' -l probe-urls -d 'Let /probe take an http(s) URL not in the config'
